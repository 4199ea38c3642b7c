package pump

import (
	"bytes"
	"context"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// TestPayloadsGolden: telemetry and event payloads are byte for byte what
// subscribers have been getting (testdata written before the pump left
// package mqtt): every quantity, NaN and Inf as null, UTC times, an event
// whose data cannot be encoded.
func TestPayloadsGolden(t *testing.T) {
	at := time.Date(2026, 11, 28, 6, 50, 1, 123456789, time.FixedZone("x", 3600))
	q := map[string]reading{"temperature": {21.5, at}, "humidity": {math.NaN(), at}, "pressure": {math.Inf(1), at}, "value": {-3, at}}
	var got []byte
	for _, p := range [][]byte{
		telemetryPayload(q, at),
		eventPayload(worldmodel.Event{Seq: 7, Time: at, Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High, Message: "motion <here>", Data: map[string]any{"area": 0.25, "n": 3}}),
		eventPayload(worldmodel.Event{Seq: 8, Time: at, Kind: "decision", Source: "agent", Priority: worldmodel.Normal}),
		eventPayload(worldmodel.Event{Seq: 9, Time: at, Kind: "odd", Source: "x", Priority: worldmodel.Critical, Data: map[string]any{"c": make(chan int)}}),
	} {
		got = append(append(got, p...), '\n')
	}
	want, err := os.ReadFile("testdata/payloads.golden")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("payloads changed:\n got %s\nwant %s", got, want)
	}
}

type pub struct {
	topic, payload string
	qos            byte
	retain         bool
}

// rig is a pump over a real world model on a fake clock, collecting by
// hand (no goroutine): each batch's publications are returned.
type rig struct {
	w         *worldmodel.Model
	clk       *clock.Fake
	p         *Pump
	st        *state
	out       []pub
	announced int
}

func newRig(t *testing.T) *rig {
	r := &rig{clk: clock.NewFake(time.Unix(1_800_000_000, 0))}
	r.w = worldmodel.New(worldmodel.Config{Clock: r.clk})
	r.p = New(r.w, Config{
		Topics: Topics{Events: "r/events", Decisions: "r/decisions", State: "r/state/", Telemetry: "r/telemetry/"},
		QoS:    1, Poll: 50 * time.Millisecond,
		Telemetry: map[string]time.Duration{"env": 0, "slow": 300 * time.Millisecond},
		Motion:    []string{"front_cam"},
		Publish: func(topic string, payload []byte, qos byte, retain bool) {
			r.out = append(r.out, pub{topic, string(payload), qos, retain})
		},
		Announce: func() { r.announced++ },
		Clock:    r.clk,
	})
	r.st = &state{actuators: map[string]string{}, motion: map[string]string{}, estop: "ok",
		latest: map[string]map[string]reading{}, pending: map[string]bool{}, due: map[string]time.Time{},
		cursor: r.w.NewCursor(true)}
	return r
}

func (r *rig) batch(after time.Duration) []pub {
	r.clk.Advance(after)
	r.out = nil
	r.p.collect(r.st, r.clk.Now())
	return r.out
}

func (r *rig) reading(source string, v float64, unit string) {
	r.w.Append(worldmodel.Observation{Source: source, Kind: worldmodel.Reading, Value: v, Unit: unit, Time: r.clk.Now()})
}

func topics(ps []pub) string {
	var s []string
	for _, p := range ps {
		t := strings.TrimPrefix(p.topic, "r/")
		if p.retain {
			t += "(" + p.payload + ")"
		}
		s = append(s, t)
	}
	return strings.Join(s, " ")
}

// TestBatches: what each batch publishes, in order, with which QoS and
// retain flag; telemetry at each sensor's interval; retained states only
// when they change, all of them on Republish; discovery told of new
// entities at most once a second.
func TestBatches(t *testing.T) {
	r := newRig(t)
	r.w.SetActuator("pan", "at 90°")
	r.w.SetHealth("estop", "latched")
	r.reading("env.temperature", 21, "°C")
	r.reading("slow.v", 1, "V")
	r.reading("plugged.x", 5, "")
	r.w.Record(worldmodel.Event{Kind: "motion_start", Source: "back_pir", Priority: worldmodel.High})
	r.w.Record(worldmodel.Event{Kind: "decision", Source: "agent", Priority: worldmodel.Normal})

	first := r.batch(0)
	if got, want := topics(first), "telemetry/env events state/back_pir/motion(ON) decisions state/pan(at 90°) state/estop(latched)"; !strings.HasPrefix(got, want) {
		t.Fatalf("first batch: %s\nwant it to start with %s", got, want)
	}
	// Then the pending telemetry (map order): slow and plugged, both due.
	if tail := topics(first[6:]); tail != "telemetry/slow telemetry/plugged" && tail != "telemetry/plugged telemetry/slow" {
		t.Fatalf("first batch's telemetry: %s", tail)
	}
	for _, p := range first {
		if wantQoS := byte(1); strings.Contains(p.topic, "telemetry/") && p.qos != 0 || !strings.Contains(p.topic, "telemetry/") && p.qos != wantQoS {
			t.Errorf("%s: QoS %d", p.topic, p.qos)
		}
	}
	if r.announced != 1 {
		t.Fatalf("announced %d times, want 1", r.announced)
	}
	numeric, motion := r.p.Entities()
	if len(numeric) != 3 || numeric["env.temperature"] != "°C" || !motion["front_cam"] || !motion["back_pir"] {
		t.Fatalf("entities %v %v", numeric, motion)
	}

	// 100 ms on: env publishes every reading, slow waits for its 300 ms;
	// an unchanged state is not published again; a new unit is a new
	// entity, announced only once a second has passed.
	r.reading("env.temperature", 22, "K")
	r.reading("slow.v", 2, "V")
	if got := topics(r.batch(100 * time.Millisecond)); got != "telemetry/env" {
		t.Fatalf("second batch: %s", got)
	}
	if got := topics(r.batch(200 * time.Millisecond)); got != "telemetry/slow" {
		t.Fatalf("third batch: %s", got)
	}
	if r.announced != 1 {
		t.Fatalf("announced %d times within a second", r.announced)
	}
	if got := topics(r.batch(time.Second)); got != "" || r.announced != 2 {
		t.Fatalf("fourth batch: %q, announced %d", got, r.announced)
	}

	// A reconnect: every retained state again, changed or not.
	r.p.Republish()
	r.w.SetHealth("estop", "ok")
	got := topics(r.batch(time.Second))
	for _, want := range []string{"state/pan(at 90°)", "state/estop(ok)", "state/back_pir/motion(ON)"} {
		if !strings.Contains(got, want) {
			t.Fatalf("republish: %s lacks %s", got, want)
		}
	}
}

// TestMissedCounted: a pump that falls behind the rings counts what it
// lost and goes on with what they still hold.
func TestMissedCounted(t *testing.T) {
	r := newRig(t)
	r.w = worldmodel.New(worldmodel.Config{Clock: r.clk, Events: 4})
	r.p.world = r.w
	r.st.cursor = r.w.NewCursor(true)
	for range 10 {
		r.w.Record(worldmodel.Event{Kind: "tick", Source: "test", Priority: worldmodel.Low})
	}
	if got := topics(r.batch(0)); got != "events events events events" {
		t.Fatalf("batch: %s, want the 4 events the ring holds", got)
	}
	if r.p.Missed() != 6 {
		t.Fatalf("missed %d, want 6", r.p.Missed())
	}
}

// TestRunEndsWithContext: Run's goroutine ends when its context does.
func TestRunEndsWithContext(t *testing.T) {
	r := newRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.p.Run(ctx) }()
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}
