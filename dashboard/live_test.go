package dashboard

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// A client that stops reading keeps at most its queue and loses the rest
// (counted); the producer never waits, and a client that reads gets
// everything.
func TestSlowClientDropsAndNeverBlocks(t *testing.T) {
	world := worldmodel.New(worldmodel.Config{DefaultCapacity: 8192})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHub(ctx, world, 16, 4)
	slow, fast := h.join(), h.join()
	defer h.leave(slow)
	defer h.leave(fast)

	const n = 5000
	got := make(chan int)
	go func() {
		count := 0
		for msg := range fast.ch {
			var m struct {
				T string  `json:"t"`
				V float64 `json:"v"`
			}
			if err := json.Unmarshal(msg, &m); err != nil {
				t.Errorf("message %s: %v", msg, err)
			}
			if m.T == "o" {
				count++
			}
			if m.V == -1 { // the sentinel
				break
			}
		}
		got <- count
	}()
	start := time.Now()
	for i := range n {
		world.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: float64(i), Unit: "°C"})
		if i%500 == 0 {
			time.Sleep(time.Millisecond) // let the pump run on a busy machine
		}
	}
	appended := time.Since(start)
	// Once the reading client has caught up (it may lose some of a burst:
	// its queue is 16 too), the next reading reaches it.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(20 * time.Second)
wait:
	for {
		select {
		case c := <-got:
			if c == 0 {
				t.Fatal("the reading client got nothing")
			}
			break wait
		case <-tick.C:
			world.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: -1})
		case <-timeout:
			t.Fatal("the reading client does not get new readings")
		}
	}
	if len(slow.ch) > 16 {
		t.Fatalf("slow client holds %d messages, its queue is 16", len(slow.ch))
	}
	if slow.dropped.Load() < n-16 {
		t.Fatalf("slow client dropped %d of %d", slow.dropped.Load(), n)
	}
	if h.dropped.Load() < slow.dropped.Load() {
		t.Fatalf("hub counts %d drops, the slow client %d", h.dropped.Load(), slow.dropped.Load())
	}
	t.Logf("%d appends in %v with a stalled client", n, appended)
}

// The pump runs only while a client is connected: a closed page costs
// nothing.
func TestPumpOnlyWithClients(t *testing.T) {
	world := worldmodel.New(worldmodel.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	base := runtime.NumGoroutine()
	h := newHub(ctx, world, 16, 1)
	if runtime.NumGoroutine() != base {
		t.Fatal("a hub without clients runs a goroutine")
	}
	c := h.join()
	if h.join() != nil {
		t.Fatal("max_clients 1 let a second client in")
	}
	world.Append(worldmodel.Observation{Source: "a.b", Kind: worldmodel.Reading, Value: 1})
	select {
	case <-c.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no message")
	}
	h.leave(c)
	done := make(chan struct{})
	go func() { h.wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the pump did not stop with its last client")
	}
	// A new client starts it again.
	c = h.join()
	defer h.leave(c)
	world.Append(worldmodel.Observation{Source: "a.b", Kind: worldmodel.Reading, Value: 2})
	select {
	case <-c.ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no message after a restart")
	}
}

func TestEncodeItem(t *testing.T) {
	ts := time.UnixMilli(1_700_000_000_123)
	for _, c := range []struct {
		it   worldmodel.Item
		want string
	}{
		{worldmodel.Item{Kind: worldmodel.ItemObservation, Obs: worldmodel.Observation{Seq: 3, Time: ts, Source: "env.t", Kind: worldmodel.Reading, Value: 21.5, Unit: "°C"}},
			`{"t":"o","seq":3,"ts":1700000000123,"src":"env.t","v":21.5,"u":"°C"}`},
		{worldmodel.Item{Kind: worldmodel.ItemEvent, Event: worldmodel.Event{Seq: 4, Time: ts, Source: "cam", Kind: "motion_start", Priority: worldmodel.High, Message: "m", Data: map[string]any{"boxes": [][4]int{{1, 2, 3, 4}}}}},
			`{"t":"e","seq":4,"ts":1700000000123,"src":"cam","kind":"motion_start","prio":"high","msg":"m","data":{"boxes":[[1,2,3,4]]}}`},
		{worldmodel.Item{Kind: worldmodel.ItemRecord, Record: worldmodel.Record{Seq: 5, Time: ts, Source: "pan.set_angle", Kind: "tool_call", Data: json.RawMessage(`{"caller":"web"}`)}},
			`{"t":"r","seq":5,"ts":1700000000123,"src":"pan.set_angle","kind":"tool_call","data":{"caller":"web"}}`},
		{worldmodel.Item{Kind: worldmodel.ItemRecord, Record: worldmodel.Record{Seq: 6, Time: ts, Source: "llm", Kind: "llm", Data: json.RawMessage(`{"prompt":"` + longString(5000) + `","ms":12.5}`)}},
			`{"t":"r","seq":6,"ts":1700000000123,"src":"llm","kind":"llm","data":{"ms":12.5,"prompt":{"omitted_bytes":5002}}}`},
		{worldmodel.Item{Kind: worldmodel.ItemObservation, Obs: worldmodel.Observation{Seq: 7, Time: ts, Source: "cam.live", Kind: worldmodel.BlobRef, Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: []byte{1}}}}, ``},
	} {
		got := string(encodeItem(nil, &c.it))
		if got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
		if got != "" && !json.Valid([]byte(got)) {
			t.Errorf("not JSON: %s", got)
		}
	}
}

func longString(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'x'
	}
	return string(b)
}

func BenchmarkEncodeReading(b *testing.B) {
	it := worldmodel.Item{Kind: worldmodel.ItemObservation, Obs: worldmodel.Observation{Seq: 3, Time: time.Now(), Source: "env.temperature", Kind: worldmodel.Reading, Value: 21.5, Unit: "°C"}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = encodeItem(buf[:0], &it)
	}
}
