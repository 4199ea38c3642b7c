package sensors

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// recSink records what a sensor produced.
type recSink struct {
	mu     sync.Mutex
	obs    []worldmodel.Observation
	events []worldmodel.Event
}

func (r *recSink) Observe(o worldmodel.Observation) {
	r.mu.Lock()
	r.obs = append(r.obs, o)
	r.mu.Unlock()
}

func (r *recSink) Raise(e worldmodel.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recSink) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		out = append(out, e.Kind)
	}
	return out
}

func f(v float64) *float64 { return &v }

func reading(src string, v float64) worldmodel.Observation {
	return worldmodel.Observation{Time: time.Now(), Source: src, Kind: worldmodel.Reading, Value: v, Unit: "°C"}
}

func TestThresholdAboveHysteresis(t *testing.T) {
	rec := &recSink{}
	s := WithThresholds("env", []Threshold{{
		Quantity: "temperature", Above: f(30), Hysteresis: 2, Priority: worldmodel.High, Event: "overheat",
	}}, rec)
	// Noise around the limit must raise once; clearing needs the full band.
	for _, v := range []float64{25, 29.9, 30.1, 29.5, 30.4, 28.5, 30.2, 28.0, 27.9, 30.01} {
		s.Observe(reading("env.temperature", v))
	}
	got := strings.Join(rec.kinds(), ",")
	want := "overheat,overheat_cleared,overheat"
	if got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
	e := rec.events[0]
	if e.Priority != worldmodel.High || e.Source != "env.temperature" || e.Data["value"] != 30.1 || e.Data["above"] != 30.0 {
		t.Errorf("first event = %+v", e)
	}
	if rec.events[1].Priority != worldmodel.Low || rec.events[1].Data["value"] != 28.0 {
		t.Errorf("clear event = %+v", rec.events[1])
	}
	if len(rec.obs) != 10 {
		t.Errorf("observations passed through = %d, want 10", len(rec.obs))
	}
}

func TestThresholdBelowStartsInAlarm(t *testing.T) {
	rec := &recSink{}
	s := WithThresholds("bat", []Threshold{{Quantity: "voltage", Below: f(11.2), Hysteresis: 0.3, Priority: worldmodel.High, Event: "battery_low"}}, rec)
	for _, v := range []float64{10.9, 11.3, 11.4, 11.49, 11.5, 11.1} {
		s.Observe(reading("bat.voltage", v))
	}
	if got := strings.Join(rec.kinds(), ","); got != "battery_low,battery_low_cleared,battery_low" {
		t.Fatalf("events = %s", got)
	}
	if !strings.Contains(rec.events[0].Message, "below 11.2") {
		t.Errorf("message %q", rec.events[0].Message)
	}
}

func TestThresholdChange(t *testing.T) {
	rec := &recSink{}
	s := WithThresholds("door", []Threshold{{Quantity: "distance", Change: f(0.5), Priority: worldmodel.Normal}}, rec)
	// Reference moves only when an event fires, so slow creep accumulates.
	for _, v := range []float64{2.0, 2.2, 2.4, 2.5, 2.6, 2.0, 2.1} {
		s.Observe(reading("door.distance", v))
	}
	if len(rec.events) != 2 {
		t.Fatalf("events = %v", rec.kinds())
	}
	if rec.events[0].Kind != "threshold" || rec.events[0].Data["from"] != 2.0 || rec.events[0].Data["value"] != 2.5 {
		t.Errorf("first = %+v", rec.events[0].Data)
	}
	if rec.events[1].Data["from"] != 2.5 || rec.events[1].Data["value"] != 2.0 {
		t.Errorf("second = %+v", rec.events[1].Data)
	}
}

func TestThresholdIgnoresOtherSourcesAndKinds(t *testing.T) {
	rec := &recSink{}
	s := WithThresholds("env", []Threshold{{Quantity: "temperature", Above: f(0)}}, rec)
	s.Observe(reading("env.humidity", 99))
	s.Observe(reading("env2.temperature", 99))
	s.Observe(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Text, Text: "99"})
	s.Observe(reading("env.temperature", math.NaN()))
	if len(rec.events) != 0 {
		t.Fatalf("unexpected events %v", rec.kinds())
	}
	s.Observe(reading("env.temperature", 1))
	if len(rec.events) != 1 {
		t.Fatalf("events = %v", rec.kinds())
	}
}

func TestThresholdTwoQuantities(t *testing.T) {
	rec := &recSink{}
	s := WithThresholds("env", []Threshold{
		{Quantity: "temperature", Above: f(30), Event: "hot"},
		{Quantity: "humidity", Above: f(80), Event: "humid"},
		{Quantity: "temperature", Below: f(5), Event: "cold"},
	}, rec)
	s.Observe(reading("env.temperature", 2))
	s.Observe(reading("env.humidity", 90))
	s.Observe(reading("env.temperature", 31))
	if got := strings.Join(rec.kinds(), ","); got != "cold,humid,hot,cold_cleared" {
		t.Fatalf("events = %s", got)
	}
}

func TestThresholdValidate(t *testing.T) {
	bad := []Threshold{
		{Quantity: "", Above: f(1)},
		{Quantity: "t"},
		{Quantity: "t", Above: f(1), Below: f(0)},
		{Quantity: "t", Above: f(1), Hysteresis: -1},
		{Quantity: "t", Change: f(0)},
		{Quantity: "t", Change: f(1), Hysteresis: 1},
		{Quantity: "t", Above: f(math.Inf(1))},
		{Quantity: "t", Above: f(1), Priority: 9},
	}
	for i, th := range bad {
		if th.Validate() == nil {
			t.Errorf("%d: %+v validated", i, th)
		}
	}
	if err := (Threshold{Quantity: "t", Below: f(1), Hysteresis: 0.5, Priority: worldmodel.Critical}).Validate(); err != nil {
		t.Error(err)
	}
	// Invalid thresholds are dropped; with none left the sink is next itself.
	rec := &recSink{}
	if s := WithThresholds("x", bad, rec); s != Sink(rec) {
		t.Errorf("expected passthrough sink, got %T", s)
	}
}

func TestThresholdConcurrent(t *testing.T) {
	rec := &recSink{}
	s := WithThresholds("env", []Threshold{{Quantity: "t", Above: f(10), Hysteresis: 1}}, rec)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				s.Observe(reading("env.t", float64(i%20)))
			}
		}()
	}
	wg.Wait()
	// Alarm and clear must alternate whatever the interleaving.
	k := rec.kinds()
	for i, e := range k {
		want := "threshold"
		if i%2 == 1 {
			want = "threshold_cleared"
		}
		if e != want {
			t.Fatalf("event %d = %s, want %s (%v)", i, e, want, k[:min(len(k), i+3)])
		}
	}
}

func BenchmarkObserveWithThresholds(b *testing.B) {
	s := WithThresholds("env", []Threshold{
		{Quantity: "temperature", Above: f(1e9), Hysteresis: 1},
		{Quantity: "humidity", Below: f(-1e9)},
	}, discard{})
	o := reading("env.temperature", 21.5)
	b.ReportAllocs()
	for b.Loop() {
		s.Observe(o)
	}
}

type discard struct{}

func (discard) Observe(worldmodel.Observation) {}
func (discard) Raise(worldmodel.Event)         {}

func ExampleWithThresholds() {
	rec := &recSink{}
	above := 30.0
	s := WithThresholds("env", []Threshold{{Quantity: "temperature", Above: &above, Hysteresis: 1, Priority: worldmodel.High, Event: "overheat"}}, rec)
	for _, v := range []float64{29, 31, 30.5, 28.9} {
		s.Observe(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: v, Unit: "°C"})
	}
	for _, e := range rec.events {
		fmt.Println(e.Priority, e.Kind, e.Message)
	}
	// Output:
	// high overheat env.temperature 31 °C above 30
	// low overheat_cleared env.temperature 28.9 °C back within above 30 (hysteresis 1)
}
