// Package supervise is the one owner of sensor supervision and health: it
// restarts a sensor whose Run returned, with the sensors package's backoff,
// unless the error is sensors.Permanent (a bad option, a bus that is not
// there), and keeps the health of each in one place, the world model (what
// agent.status and the summary show). The node starts and stops sensors
// through it; it never imports the node.
package supervise

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Supervisor runs sensors, each in its own goroutine, until stopped.
type Supervisor struct {
	world *worldmodel.Model
	raise func(worldmodel.Event)
	clock clock.Clock
	log   *slog.Logger

	mu   sync.Mutex
	runs map[string]*run // sensor name -> running goroutine
}

// run is one supervised sensor goroutine.
type run struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a supervisor whose sensors write to world and raise their
// events through raise (the node's Raise: the event log, the e-stop
// handlers, the interrupt bus). Restart delays are timed on clk.
func New(world *worldmodel.Model, raise func(worldmodel.Event), clk clock.Clock, log *slog.Logger) *Supervisor {
	return &Supervisor{world: world, raise: raise, clock: clk, log: log, runs: map[string]*run{}}
}

// Start runs s under supervision until ctx ends or Stop: if Run returns
// before that, the sensor is marked degraded and restarted with backoff, so
// one broken device never takes the agent down. limits are the board's
// thresholds on the sensor's readings.
func (v *Supervisor) Start(ctx context.Context, s sensors.Sensor, limits []sensors.Threshold) {
	name := s.Name()
	sctx, cancel := context.WithCancel(ctx)
	r := &run{cancel: cancel, done: make(chan struct{})}
	v.mu.Lock()
	v.runs[name] = r
	v.mu.Unlock()
	v.world.SetHealth(name, "ok")
	var out sensors.Sink = sink{v: v, name: name}
	if len(limits) > 0 {
		out = sensors.WithThresholds(name, limits, out)
	}
	go func() {
		defer close(r.done)
		v.supervise(sctx, s, out)
	}()
}

// supervise runs s until ctx ends, restarting it after each failure that
// retrying may cure.
func (v *Supervisor) supervise(ctx context.Context, s sensors.Sensor, out sensors.Sink) {
	name := s.Name()
	b := sensors.DefaultBackoff
	for attempt := 0; ; attempt++ {
		began := v.clock.Now()
		err := s.Run(ctx, out)
		if ctx.Err() != nil {
			return
		}
		if v.clock.Now().Sub(began) > b.Max {
			// It ran well for a while: this is a new fault, not the
			// same one again, so it gets a quick restart.
			attempt = 0
		}
		if err == nil {
			err = errors.New("sensor stopped without an error")
		}
		fault := worldmodel.Event{Kind: sensors.EventFault, Priority: worldmodel.Normal, Message: err.Error()}
		if sensors.IsPermanent(err) {
			v.log.Error("sensor failed; not restarting (the error does not go away by retrying)", "sensor", name, "err", err)
			out.Raise(fault)
			return
		}
		wait := b.Delay(attempt)
		v.log.Warn("sensor failed; restarting", "sensor", name, "err", err, "in", wait.Round(time.Millisecond))
		out.Raise(fault)
		t := v.clock.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C():
		}
	}
}

// Stop stops the named sensor and waits for its goroutine to end.
func (v *Supervisor) Stop(name string) {
	v.mu.Lock()
	r := v.runs[name]
	delete(v.runs, name)
	v.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// Wait waits for every sensor goroutine to end, until ctx ends, and
// reports whether they all did. Their contexts are the caller's to cancel.
func (v *Supervisor) Wait(ctx context.Context) bool {
	v.mu.Lock()
	runs := maps.Clone(v.runs)
	v.mu.Unlock()
	for name, r := range runs {
		select {
		case <-r.done:
		case <-ctx.Done():
			v.log.Error("sensor did not stop in time", "sensor", name)
			return false
		}
	}
	return true
}

// Status is the sensors component of agent.status: each running sensor's
// health as the world model holds it.
func (v *Supervisor) Status() any {
	health := v.world.Health()
	v.mu.Lock()
	defer v.mu.Unlock()
	out := make(map[string]string, len(v.runs))
	for name := range v.runs {
		out[name] = cmp.Or(health[name], "ok")
	}
	return out
}
