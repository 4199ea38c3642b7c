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
// (1, 2, …); when that is nil it reads a counter every millisecond.
type counter struct {
	fail func(run int32) error
	runs atomic.Int32
}

func (c *counter) Name() string { return "tick" }

func (c *counter) Run(ctx context.Context, out sensors.Sink) error {
	if err := c.fail(c.runs.Add(1)); err != nil {
		return err
	}
	tk := time.NewTicker(time.Millisecond)
	defer tk.Stop()
	for n := 1.0; ; n++ {
		select {
		case <-ctx.Done():
			return nil
		case <-tk.C:
			out.Observe(worldmodel.Observation{Source: "tick.count", Kind: worldmodel.Reading, Value: n, Unit: "1"})
		}
	}
}

// supervised starts c under a supervisor whose events land in the world
// model's event log, as the node's Raise records them.
func supervised(t *testing.T, c *counter) (*Supervisor, *worldmodel.Model) {
	t.Helper()
	world := worldmodel.New(worldmodel.Config{})
	raise := func(e worldmodel.Event) { world.Record(e) }
	v := New(world, raise, clock.Real(), slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	v.Start(ctx, c, nil)
	t.Cleanup(func() {
		cancel()
		if !v.Wait(time.Second) {
			t.Error("the sensor did not stop")
		}
	})
	return v, world
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestFailingSensorIsDegradedAndRestarted(t *testing.T) {
	c := &counter{fail: func(run int32) error {
		if run == 1 {
			return errors.New("device not found")
		}
		return nil
	}}
	_, world := supervised(t, c)
	waitFor(t, "fault event", func() bool {
		for _, e := range world.Events(0, worldmodel.Low, 0) {
			if e.Kind == "sensor_fault" && e.Source == "tick" && e.Message == "device not found" {
				return true
			}
		}
		return false
	})
	// After the backoff the sensor runs again and readings arrive.
	waitFor(t, "restart", func() bool { _, ok := world.Latest("tick.count"); return ok })
	if got := c.runs.Load(); got != 2 {
		t.Fatalf("runs = %d", got)
	}
}

// A sensor failing with a Permanent error is not restarted, and its health
// says why, in the one place agent.status reads.
func TestPermanentSensorFailureIsNotRetried(t *testing.T) {
	c := &counter{fail: func(int32) error { return sensors.Permanent(errors.New("no such bus")) }}
	v, world := supervised(t, c)
	waitFor(t, "degraded health", func() bool { return strings.Contains(world.Health()["tick"], "no such bus") })
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
	c := &counter{fail: func(int32) error { return nil }}
	v, world := supervised(t, c)
	waitFor(t, "readings", func() bool { _, ok := world.Latest("tick.count"); return ok })
	if st := v.Status().(map[string]string); st["tick"] != "ok" {
		t.Fatalf("status %v", st)
	}
	v.Stop("tick")
	if st := v.Status().(map[string]string); len(st) != 0 {
		t.Fatalf("status after stop: %v", st)
	}
}
