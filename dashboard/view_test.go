package dashboard

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// stateMsg is what the tests read of a message of /api/state's items.
type stateMsg struct {
	T     string `json:"t"`
	Seq   uint64 `json:"seq"`
	TS    int64  `json:"ts"`
	Kind  string `json:"kind"`
	Rep   string `json:"rep"`
	N     int    `json:"n"`
	First int64  `json:"first"`
}

func decodeItems(t *testing.T, l rawList) []stateMsg {
	t.Helper()
	out := make([]stateMsg, len(l))
	for i, b := range l {
		if err := json.Unmarshal(b, &out[i]); err != nil {
			t.Fatalf("item %d %s: %v", i, b, err)
		}
	}
	return out
}

func llmRecord(at time.Time, errText string) worldmodel.Record {
	d, _ := json.Marshal(map[string]any{"purpose": "classify", "answer": "", "error": errText})
	return worldmodel.Record{Time: at, Kind: recordLLM, Source: "llm", Data: d}
}

// Events, LLM exchanges and tool calls come in the stream's order, not
// grouped by the log they come from; state records (actuator, health) are
// left out (the page has them as current state).
func TestStateItemsInStreamOrder(t *testing.T) {
	w := worldmodel.New(worldmodel.Config{})
	t0 := time.UnixMilli(1_800_000_000_000)
	w.Record(worldmodel.Event{Time: t0, Kind: "motion_start", Source: "cam", Priority: worldmodel.High})
	w.Note(llmRecord(t0.Add(time.Second), ""))
	w.SetActuator("pan", "at 90°")
	w.Note(worldmodel.Record{Time: t0.Add(2 * time.Second), Kind: toolCall, Source: "pan.set_angle", Data: json.RawMessage(`{"caller":"web"}`)})
	w.Record(worldmodel.Event{Time: t0.Add(3 * time.Second), Kind: "decision", Source: "agent"})
	w.Note(llmRecord(t0.Add(4*time.Second), ""))
	w.Record(worldmodel.Event{Time: t0.Add(5 * time.Second), Kind: "estop", Source: "web", Priority: worldmodel.Critical})

	got := decodeItems(t, stateItems(w))
	var kinds []string
	for i, m := range got {
		kinds = append(kinds, m.Kind)
		if i > 0 && m.Seq <= got[i-1].Seq {
			t.Errorf("item %d has seq %d after %d", i, m.Seq, got[i-1].Seq)
		}
	}
	if want := "[motion_start llm tool_call decision llm estop]"; fmt.Sprint(kinds) != want {
		t.Fatalf("kinds %v, want %s", kinds, want)
	}
}

// A failure repeated among other events is one line: its newest
// occurrence, with the count and the first one's time; another failure, a
// successful exchange and every other event keep their own lines.
func TestStateItemsCollapseRepeats(t *testing.T) {
	w := worldmodel.New(worldmodel.Config{})
	t0 := time.UnixMilli(1_800_000_000_000)
	for i := range 6 {
		at := t0.Add(time.Duration(i) * 20 * time.Second)
		w.Note(llmRecord(at, "llm unavailable: ollama at http://127.0.0.1:9: dial tcp: connection refused (attempt "+fmt.Sprint(i)+")"))
		w.Record(worldmodel.Event{Time: at.Add(time.Second), Kind: "motion_start", Source: "cam", Priority: worldmodel.High, Message: "motion"})
	}
	w.Note(llmRecord(t0.Add(200*time.Second), "llm truncated: the answer hit max_tokens"))
	w.Note(llmRecord(t0.Add(201*time.Second), ""))
	w.Record(worldmodel.Event{Time: t0.Add(202 * time.Second), Kind: "sensor_fault", Source: "env", Priority: worldmodel.High,
		Message: "env degraded: i2c: NACK", Data: map[string]any{"error": "i2c: NACK"}})

	got := decodeItems(t, stateItems(w))
	reps := map[string]stateMsg{}
	motions := 0
	for _, m := range got {
		if m.Kind == "motion_start" {
			motions++
		}
		if m.Rep != "" {
			if _, dup := reps[m.Rep]; dup {
				t.Errorf("two lines for %q", m.Rep)
			}
			reps[m.Rep] = m
		}
	}
	if motions != 6 || len(got) != 6+4 {
		t.Fatalf("%d items with %d motion events, want 10 with 6: %+v", len(got), motions, got)
	}
	u := reps["llm llm: llm unavailable"]
	if u.N != 6 || u.First != t0.UnixMilli() || u.TS != t0.Add(100*time.Second).UnixMilli() {
		t.Errorf("llm unavailable: n=%d first=%d ts=%d, want 6, %d, %d", u.N, u.First, u.TS, t0.UnixMilli(), t0.Add(100*time.Second).UnixMilli())
	}
	if m := reps["llm llm: llm truncated"]; m.Seq == 0 || m.N != 0 {
		t.Errorf("llm truncated: %+v, want its own line without a count", m)
	}
	if m := reps["sensor_fault env: i2c"]; m.Seq == 0 {
		t.Errorf("a sensor fault has no repeat key: %v", reps)
	}
	if len(reps) != 3 {
		t.Errorf("repeat keys %v, want 3 (a successful exchange has none)", reps)
	}
}

// When one log has lost its oldest items, the other's older lines are not
// shown either: the list is a stretch of the stream with nothing missing.
// Tool calls are their own list and are all shown.
func TestStateItemsCutWhereALogIsIncomplete(t *testing.T) {
	w := worldmodel.New(worldmodel.Config{Records: 128, Horizon: time.Nanosecond})
	t0 := time.UnixMilli(1_800_000_000_000)
	w.Record(worldmodel.Event{Time: t0, Kind: "motion_start", Source: "cam"}) // older than what the journal will hold
	for i := range 300 {
		w.Note(worldmodel.Record{Time: t0.Add(time.Duration(i+1) * time.Second), Kind: toolCall, Source: "pan.set_angle", Data: json.RawMessage(`{}`)})
	}
	w.Record(worldmodel.Event{Time: t0.Add(time.Hour), Kind: "decision", Source: "agent"})
	got := decodeItems(t, stateItems(w))
	calls := 0
	for _, m := range got {
		if m.Kind == "motion_start" {
			t.Fatalf("the event older than the journal's oldest record is shown: %+v", m)
		}
		if m.Kind == toolCall {
			calls++
		}
	}
	if calls != stateLimit || got[len(got)-1].Kind != "decision" {
		t.Fatalf("%d tool calls (want %d), last %+v (want the decision)", calls, stateLimit, got[len(got)-1])
	}
	// With nothing lost, an exchange older than every event is shown.
	w = worldmodel.New(worldmodel.Config{})
	w.Note(llmRecord(t0, ""))
	w.Record(worldmodel.Event{Time: t0.Add(time.Second), Kind: "tick", Source: "t"})
	if got := decodeItems(t, stateItems(w)); len(got) != 2 || got[0].Kind != recordLLM {
		t.Fatalf("items %+v, want the exchange and the event", got)
	}
}

// The e-stop comes from the latch (health), with the event that set it:
// the first since the last reset.
func TestEStopState(t *testing.T) {
	w := worldmodel.New(worldmodel.Config{})
	t0 := time.UnixMilli(1_800_000_000_000)
	if v := estopState(w); v.Latched {
		t.Fatalf("no latch: %+v", v)
	}
	w.Record(worldmodel.Event{Time: t0, Kind: eventEStop, Source: "mqtt", Priority: worldmodel.Critical, Message: "first"})
	w.Record(worldmodel.Event{Time: t0.Add(time.Second), Kind: eventEStopReset, Source: "actuators", Priority: worldmodel.Normal})
	w.Record(worldmodel.Event{Time: t0.Add(2 * time.Second), Kind: eventEStop, Source: "web", Priority: worldmodel.Critical, Message: "pressed"})
	if v := estopState(w); v.Latched {
		t.Fatalf("events without the latch: %+v", v)
	}
	w.SetHealth(healthEStop, "latched")
	w.Record(worldmodel.Event{Time: t0.Add(3 * time.Second), Kind: eventEStop, Source: "button", Priority: worldmodel.Critical, Message: "again"})
	for i := range 50 {
		w.Record(worldmodel.Event{Time: t0.Add(time.Duration(4+i) * time.Second), Kind: "motion_start", Source: "cam", Priority: worldmodel.High})
	}
	want := estopView{Latched: true, Time: t0.Add(2 * time.Second).UnixMilli(), Source: "web", Message: "pressed"}
	if v := estopState(w); v != want {
		t.Fatalf("got %+v, want %+v", v, want)
	}
	w.SetHealth(healthEStop, "ok")
	if v := estopState(w); v.Latched {
		t.Fatalf("after the reset: %+v", v)
	}
}

func TestRepeatKeyOnTheLiveChannel(t *testing.T) {
	r := llmRecord(time.UnixMilli(1_700_000_000_123), "llm unavailable: down")
	r.Seq = 9
	got := string(encodeItem(nil, &worldmodel.Item{Kind: worldmodel.ItemRecord, Record: r}))
	want := `{"t":"r","seq":9,"ts":1700000000123,"src":"llm","kind":"llm","data":{"answer":"","error":"llm unavailable: down","purpose":"classify"},"rep":"llm llm: llm unavailable"}`
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// An LLM exchange that failed, on the live channel: its repeat key reads the
// record's error.
func BenchmarkEncodeLLMFailure(b *testing.B) {
	r := llmRecord(time.Now(), "llm unavailable: ollama at http://127.0.0.1:9: dial tcp: connection refused")
	r.Data, _ = json.Marshal(map[string]any{"purpose": "classify", "system": longString(3000), "answer": "", "error": "llm unavailable: down"})
	it := worldmodel.Item{Kind: worldmodel.ItemRecord, Record: r}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		buf = encodeItem(buf[:0], &it)
	}
}

// /api/state's list with full logs: 1,024 journal records (a third of them
// failed LLM exchanges) and 1,024 events.
func BenchmarkStateItems(b *testing.B) {
	w := worldmodel.New(worldmodel.Config{})
	t0 := time.Now()
	for i := range 1024 {
		at := t0.Add(time.Duration(i) * time.Second)
		w.Record(worldmodel.Event{Time: at, Kind: "motion_start", Source: "cam", Priority: worldmodel.High, Message: "motion"})
		if i%3 == 0 {
			w.Note(llmRecord(at, "llm unavailable: down"))
		} else {
			w.Note(worldmodel.Record{Time: at, Kind: toolCall, Source: "pan.set_angle", Data: json.RawMessage(`{"caller":"web","ok":true}`)})
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		stateItems(w)
	}
}
