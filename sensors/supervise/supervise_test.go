package supervise

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// counter is a test sensor: Run returns fail's error for its run number
// (1, 2, …); when that is nil it writes one reading, says so on running and
// runs until its context ends.
type counter struct {
	fail    func(run int32) error
	runs    atomic.Int32
	running chan struct{}
}

func newCounter(fail func(run int32) error) *counter {
	return &counter{fail: fail, running: make(chan struct{}, 1)}
}

func (c *counter) Name() string { return "tick" }

func (c *counter) Run(ctx context.Context, out sensors.Sink) error {
	if err := c.fail(c.runs.Add(1)); err != nil {
		return err
	}
	out.Observe(worldmodel.Observation{Source: "tick.count", Kind: worldmodel.Reading, Value: 1, Unit: "1"})
	c.running <- struct{}{}
	<-ctx.Done()
	return nil
}

// supervised starts c under a supervisor; the events it raises come out of
// the returned channel.
func supervised(t *testing.T, c *counter) (*Supervisor, *worldmodel.Model, <-chan worldmodel.Event) {
	t.Helper()
	world := worldmodel.New(worldmodel.Config{})
	events := make(chan worldmodel.Event, 16)
	v := New(world, func(e worldmodel.Event) { events <- e }, clock.Real(), slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	v.Start(ctx, c, nil)
	t.Cleanup(func() {
		cancel()
		wctx, stop := context.WithTimeout(context.Background(), time.Second)
		defer stop()
		if !v.Wait(wctx) {
			t.Error("the sensor did not stop")
		}
	})
	return v, world, events
}

// next is the next value from ch, or a failure after 3 s.
func next[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(3 * time.Second):
	}
	t.Fatalf("timed out waiting for %s", what)
	var zero T
	return zero
}

func TestFailingSensorIsDegradedAndRestarted(t *testing.T) {
	c := newCounter(func(run int32) error {
		if run == 1 {
			return errors.New("device not found")
		}
		return nil
	})
	_, world, events := supervised(t, c)
	if e := next(t, "fault event", events); e.Kind != "sensor_fault" || e.Source != "tick" || e.Message != "device not found" {
		t.Fatalf("event %+v", e)
	}
	if h := world.Health()["tick"]; h != "degraded: device not found" {
		t.Fatalf("health %q", h)
	}
	// After the backoff the sensor runs again and readings arrive.
	next(t, "restart", c.running)
	if _, ok := world.Latest("tick.count"); !ok {
		t.Fatal("no reading after the restart")
	}
	if got := c.runs.Load(); got != 2 {
		t.Fatalf("runs = %d", got)
	}
}

// A sensor failing with a Permanent error is not restarted, and its health
// says why, in the one place agent.status reads.
func TestPermanentSensorFailureIsNotRetried(t *testing.T) {
	c := newCounter(func(int32) error { return sensors.Permanent(errors.New("no such bus")) })
	v, world, events := supervised(t, c)
	next(t, "fault event", events)
	if h := world.Health()["tick"]; !strings.Contains(h, "no such bus") {
		t.Fatalf("health %q", h)
	}
	time.Sleep(sensors.DefaultBackoff.Initial * 2) // a retry would have happened by now
	if got := c.runs.Load(); got != 1 {
		t.Fatalf("a permanently failed sensor ran %d times", got)
	}
	if st := v.Status().(map[string]string)["tick"]; !strings.HasPrefix(st, "degraded: no such bus") {
		t.Fatalf("status %q", st)
	}
}

// Stop ends one sensor and drops it from the status.
func TestStopRemovesTheSensor(t *testing.T) {
	c := newCounter(func(int32) error { return nil })
	v, _, _ := supervised(t, c)
	next(t, "run", c.running)
	if st := v.Status().(map[string]string); st["tick"] != "ok" {
		t.Fatalf("status %v", st)
	}
	v.Stop("tick")
	if st := v.Status().(map[string]string); len(st) != 0 {
		t.Fatalf("status after stop: %v", st)
	}
}
