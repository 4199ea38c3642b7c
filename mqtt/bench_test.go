package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/benchlat"
	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Benchmarks of the control plane over loopback (docs/bench/mqtt.md,
// "MQTT control plane"):
//
//	go test -run '^$' -bench . -benchtime 5000x ./mqtt
//
// The /mosquitto variants skip without mosquitto installed;
// /mosquitto-nodelay sets set_tcp_nodelay, which a robot's mosquitto.conf
// should too.

func benchBrokers(b *testing.B, run func(b *testing.B, r *rig)) {
	b.Run("embedded", func(b *testing.B) {
		r := newRig(b, rigOpts{})
		r.start(b)
		run(b, r)
	})
	// mosquitto as installed: Nagle's algorithm on its sockets meets the
	// peer's delayed ACK, and a small message can wait ~40 ms.
	b.Run("mosquitto", func(b *testing.B) {
		m := startMosquitto(b)
		r := newRig(b, rigOpts{broker: m.URL()})
		r.start(b)
		run(b, r)
	})
	b.Run("mosquitto-nodelay", func(b *testing.B) {
		m := startMosquitto(b, "set_tcp_nodelay true")
		r := newRig(b, rigOpts{broker: m.URL()})
		r.start(b)
		run(b, r)
	})
}

// BenchmarkCommandRoundTrip: a client publishes {"id","tool","params"} on
// cmd and waits for the reply; the tool runs in between. One command at a
// time, so ns/op is the round trip; p50/p99 are reported as metrics.
func BenchmarkCommandRoundTrip(b *testing.B) {
	benchBrokers(b, func(b *testing.B, r *rig) {
		tp := r.topics()
		replies := make(chan struct{}, 1)
		c := benchClient(b, r.url(), tp.Reply+"/#", func(paho.Message) { replies <- struct{}{} })
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			t0 := time.Now()
			c.Publish(tp.Cmd, 1, false, fmt.Sprintf(`{"id":"%d","tool":"headlight.set","params":{"on":%t}}`, i, i%2 == 0))
			select {
			case <-replies:
			case <-time.After(5 * time.Second):
				b.Fatalf("no reply to command %d", i)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		if got := r.lamp.calls.Load(); got != int64(b.N) {
			b.Fatalf("%d tool calls for %d commands", got, b.N)
		}
		benchlat.Report(b, lat)
	})
}

// BenchmarkSustainedCommands: as many commands as the plane takes, up to
// 64 in flight at QoS 1; every command must be answered exactly once (zero
// loss), and cmds/s is the sustained rate.
func BenchmarkSustainedCommands(b *testing.B) {
	benchBrokers(b, func(b *testing.B, r *rig) {
		tp := r.topics()
		const window = 64
		slots := make(chan struct{}, window)
		var mu sync.Mutex
		seen := make(map[string]int, b.N)
		done := make(chan struct{})
		c := benchClient(b, r.url(), tp.Reply+"/#", func(m paho.Message) {
			var rep Reply
			if json.Unmarshal(m.Payload(), &rep) != nil || rep.ID == nil || !rep.OK {
				b.Errorf("bad reply %s", m.Payload())
			}
			mu.Lock()
			seen[*rep.ID]++
			if len(seen) == b.N {
				close(done)
			}
			mu.Unlock()
			<-slots
		})
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			slots <- struct{}{}
			c.Publish(tp.Cmd, 1, false, fmt.Sprintf(`{"id":"%d","tool":"headlight.set","params":{"on":true}}`, i))
		}
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			mu.Lock()
			b.Fatalf("%d of %d commands answered", len(seen), b.N)
		}
		took := time.Since(start)
		b.StopTimer()
		for id, n := range seen {
			if n != 1 {
				b.Fatalf("command %s answered %d times", id, n)
			}
		}
		if got := r.lamp.calls.Load(); got != int64(b.N) {
			b.Fatalf("%d tool calls for %d commands", got, b.N)
		}
		b.ReportMetric(float64(b.N)/took.Seconds(), "cmds/s")
	})
}

// BenchmarkEstop: a message on the estop topic until the critical handler
// (where the node stops the actuators) has run.
func BenchmarkEstop(b *testing.B) {
	benchBrokers(b, func(b *testing.B, r *rig) {
		tp := r.topics()
		hit := make(chan time.Time, 1)
		r.host.onCritical(func(worldmodel.Event) { hit <- time.Now() })
		c := benchClient(b, r.url(), "", nil)
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			c.Publish(tp.Estop, 1, false, "STOP")
			select {
			case at := <-hit:
				lat = append(lat, at.Sub(t0))
			case <-time.After(5 * time.Second):
				b.Fatal("e-stop not handled")
			}
		}
		b.StopTimer()
		benchlat.Report(b, lat)
	})
}

func benchClient(b *testing.B, url, filter string, handle func(paho.Message)) paho.Client {
	b.Helper()
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("bench-" + randomHex(4)).
		SetAutoReconnect(false).SetOrderMatters(false).SetConnectTimeout(3 * time.Second))
	if err := mqttclient.Wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Disconnect(50) })
	if filter != "" {
		if err := mqttclient.Wait(context.Background(), c.Subscribe(filter, 1, func(_ paho.Client, m paho.Message) { handle(m) }), 5*time.Second); err != nil {
			b.Fatal(err)
		}
	}
	return c
}
