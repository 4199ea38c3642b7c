package node

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Sensor supervision has one owner: the node restarts a sensor whose Run
// returned, with the sensors package's backoff, unless the error is
// sensors.Permanent (a bad option, a bus that is not there), and keeps the
// health of each in one place, the world model (what agent.status and the
// summary show).

// sensorRun is one supervised sensor goroutine.
type sensorRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// sink is what one sensor writes to: the world model and the interrupt bus,
// with the sensor's name filled in and its health tracked.
type sink struct {
	n    *Node
	name string
}

func (s sink) Observe(o worldmodel.Observation) { s.n.World.Append(o) }

// Watched implements sensors.Watcher: the dashboard watches live frames.
func (s sink) Watched(source string) bool { return s.n.World.Watched(source) }

func (s sink) Raise(e worldmodel.Event) {
	if e.Source == "" {
		e.Source = s.name
	}
	switch e.Kind {
	case sensors.EventFault:
		s.n.World.SetHealth(s.name, "degraded: "+e.Message)
	case sensors.EventRecovered:
		s.n.World.SetHealth(s.name, "ok")
	}
	s.n.Raise(e)
}

// startSensor runs a sensor under supervision: if Run returns before ctx
// ends, the sensor is marked degraded and restarted with backoff, so one
// broken device never takes the agent down.
func (n *Node) startSensor(ctx context.Context, s sensors.Sensor) {
	name := s.Name()
	sctx, cancel := context.WithCancel(ctx)
	r := &sensorRun{cancel: cancel, done: make(chan struct{})}
	n.mu.Lock()
	n.runs[name] = r
	n.mu.Unlock()
	n.World.SetHealth(name, "ok")
	var out sensors.Sink = sink{n: n, name: name}
	if ts := n.limits[name]; len(ts) > 0 {
		out = sensors.WithThresholds(name, ts, out)
	}
	go func() {
		defer close(r.done)
		b := sensors.DefaultBackoff
		for attempt := 0; ; attempt++ {
			began := n.clock.Now()
			err := s.Run(sctx, out)
			if sctx.Err() != nil {
				return
			}
			if n.clock.Now().Sub(began) > b.Max {
				// It ran well for a while: this is a new fault, not the
				// same one again, so it gets a quick restart.
				attempt = 0
			}
			if err == nil {
				err = errors.New("sensor stopped without an error")
			}
			fault := worldmodel.Event{Kind: sensors.EventFault, Priority: worldmodel.Normal, Message: err.Error()}
			if sensors.IsPermanent(err) {
				n.Log.Error("sensor failed; not restarting (the error does not go away by retrying)", "sensor", name, "err", err)
				out.Raise(fault)
				return
			}
			wait := b.Delay(attempt)
			n.Log.Warn("sensor failed; restarting", "sensor", name, "err", err, "in", wait.Round(time.Millisecond))
			out.Raise(fault)
			t := n.clock.NewTimer(wait)
			select {
			case <-sctx.Done():
				t.Stop()
				return
			case <-t.C():
			}
		}
	}()
}

func (n *Node) stopSensor(name string) {
	n.mu.Lock()
	r := n.runs[name]
	delete(n.runs, name)
	n.mu.Unlock()
	if r != nil {
		r.cancel()
		<-r.done
	}
}

// waitSensors waits for every sensor goroutine to end, up to d.
func (n *Node) waitSensors(d time.Duration) bool {
	n.mu.Lock()
	runs := maps.Clone(n.runs)
	n.mu.Unlock()
	timeout := time.After(d)
	for name, r := range runs {
		select {
		case <-r.done:
		case <-timeout:
			n.Log.Error("sensor did not stop in time", "sensor", name)
			return false
		}
	}
	return true
}

// sensorStatus is the sensors component of agent.status: each running
// sensor's health as the world model holds it.
func (n *Node) sensorStatus() any {
	health := n.World.Health()
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]string, len(n.runs))
	for name := range n.runs {
		out[name] = cmp.Or(health[name], "ok")
	}
	return out
}
