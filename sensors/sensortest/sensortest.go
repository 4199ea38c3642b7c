// Package sensortest helps test sensor kinds end to end: a sensor block is
// parsed by the real board loader (so its options go through the same
// strict decoder as on a robot), built through the sensors registry, run,
// and what it produced is recorded.
package sensortest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/sensorconf"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Recorder is a Sink that keeps everything, safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	obs    []worldmodel.Observation
	events []worldmodel.Event
	notify chan struct{}
}

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder { return &Recorder{notify: make(chan struct{}, 1)} }

// Observe implements sensors.Sink.
func (r *Recorder) Observe(o worldmodel.Observation) {
	r.mu.Lock()
	r.obs = append(r.obs, o)
	r.mu.Unlock()
	r.poke()
}

// Raise implements sensors.Sink.
func (r *Recorder) Raise(e worldmodel.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	r.poke()
}

func (r *Recorder) poke() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

// Observations returns the observations of source so far.
func (r *Recorder) Observations(source string) []worldmodel.Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []worldmodel.Observation
	for _, o := range r.obs {
		if o.Source == source {
			out = append(out, o)
		}
	}
	return out
}

// Values returns the reading values of source so far.
func (r *Recorder) Values(source string) []float64 {
	var out []float64
	for _, o := range r.Observations(source) {
		out = append(out, o.Value)
	}
	return out
}

// Sources lists the distinct sources observed, sorted.
func (r *Recorder) Sources() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, o := range r.obs {
		if !slices.Contains(out, o.Source) {
			out = append(out, o.Source)
		}
	}
	slices.Sort(out)
	return out
}

// Events returns the events raised so far, all kinds when kinds is empty.
func (r *Recorder) Events(kinds ...string) []worldmodel.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []worldmodel.Event
	for _, e := range r.events {
		if len(kinds) == 0 || slices.Contains(kinds, e.Kind) {
			out = append(out, e)
		}
	}
	return out
}

// EventKinds is the sequence of event kinds raised, joined with commas.
func (r *Recorder) EventKinds() string {
	var k []string
	for _, e := range r.Events() {
		k = append(k, e.Kind)
	}
	return strings.Join(k, ",")
}

// WaitFor polls cond until it holds or timeout passes (then fails t).
func (r *Recorder) WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s; events: %s; sources: %v", timeout, what, r.EventKinds(), r.Sources())
		case <-r.notify:
		case <-tick.C:
		}
	}
}

// Board parses a one-sensor board file for platform ("sim", or "raspi"
// with model rpi4, "jetson" with model jetson-orin-nano) whose sensors
// list is block, and returns the sensor's config as the runtime builds it.
func Board(t testing.TB, platform, block string) sensors.Config {
	t.Helper()
	cfg, err := ParseBoard(platform, block)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// ParseBoard is Board returning the loader's error.
func ParseBoard(platform, block string) (sensors.Config, error) {
	cfg, _, err := parse(platform, block)
	return cfg, err
}

// Thresholds converts a parsed block's thresholds (for wrapping a sink the
// way the runtime does).
func Thresholds(t testing.TB, platform, block string) []sensors.Threshold {
	t.Helper()
	_, limits, err := parse(platform, block)
	if err != nil {
		t.Fatal(err)
	}
	return limits
}

// parse loads a one-sensor board and converts it exactly as the runtime does.
func parse(platform, block string) (sensors.Config, []sensors.Threshold, error) {
	model := map[string]string{"raspi": "\n  model: rpi4", "jetson": "\n  model: jetson-orin-nano"}[platform]
	src := fmt.Sprintf("device:\n  id: test\n  platform: %s%s\nsensors:\n%s\n", platform, model, indent(block))
	c, err := board.Parse("test.yaml", []byte(src))
	if err != nil {
		return sensors.Config{}, nil, err
	}
	if len(c.Sensors) != 1 {
		return sensors.Config{}, nil, fmt.Errorf("want one sensor block, got %d", len(c.Sensors))
	}
	return sensorconf.Of(c, c.Sensors[0], ".")
}

func indent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	// Re-indent the block under "sensors:" whatever its own indentation.
	minIndent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " "))
		if minIndent < 0 || n < minIndent {
			minIndent = n
		}
	}
	for i, l := range lines {
		if len(l) >= minIndent {
			lines[i] = "  " + l[minIndent:]
		}
	}
	return strings.Join(lines, "\n")
}

// RunSim parses a one-sensor block for the sim board, runs its sensor
// until the test ends (as Start) and returns what it produces.
func RunSim(t testing.TB, block string) *Recorder {
	t.Helper()
	rec := NewRecorder()
	Start(t, Board(t, "sim", block), rec)
	return rec
}

// Start builds the sensor of cfg and runs it into out until the returned
// stop is called; stop fails t if Run returned an error or took longer
// than 2 s to stop (the runtime's shutdown budget).
func Start(t testing.TB, cfg sensors.Config, out sensors.Sink) (stop func()) {
	t.Helper()
	s, err := sensors.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return Run(t, s, out)
}

// Run runs s, a sensor the test built (and perhaps adjusted), into out as
// Start does.
func Run(t testing.TB, s sensors.Sensor, out sensors.Sink) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run returned %v", err)
				}
			case <-time.After(2 * time.Second):
				t.Errorf("sensor %s did not stop within 2 s", s.Name())
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// Refusal is {block, want}: a sensor block that must not build, and a part
// of the error it must be refused with.
type Refusal = [2]string

// Refused checks that each block is refused on platform, by the board
// loader or by the kind, with an error containing its want. It returns
// the errors in the order of cases, for checks of their type.
func Refused(t testing.TB, platform string, cases []Refusal) []error {
	t.Helper()
	errs := make([]error, len(cases))
	for i, c := range cases {
		block, want := c[0], c[1]
		cfg, err := ParseBoard(platform, block)
		if err == nil {
			_, err = sensors.New(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s\n  err = %v\n want %q", block, err, want)
		}
		errs[i] = err
	}
	return errs
}
