package node

import (
	"context"
	"fmt"
	"maps"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// sensorRun is one supervised sensor goroutine.
type sensorRun struct {
	cancel context.CancelFunc
	done   chan struct{}
	state  string
}

// sink is what one sensor writes to: the world model and the interrupt bus,
// with the sensor's name filled in and its health tracked.
type sink struct {
	n    *Node
	name string
}

func (s sink) Observe(o worldmodel.Observation) { s.n.World.Append(o) }

func (s sink) Raise(e worldmodel.Event) {
	if e.Source == "" {
		e.Source = s.name
	}
	switch e.Kind {
	case "sensor_fault":
		s.n.setSensorState(s.name, "degraded: "+e.Message)
	case "sensor_recovered":
		s.n.setSensorState(s.name, "ok")
	}
	s.n.Raise(e)
}

func (n *Node) setSensorState(name, state string) {
	n.mu.Lock()
	if r := n.runs[name]; r != nil {
		r.state = state
	}
	n.mu.Unlock()
	n.World.SetHealth(name, state)
}

// startSensor runs a sensor under supervision: if Run returns before ctx
// ends, the sensor is marked degraded and restarted with backoff, so one
// broken device never takes the agent down.
func (n *Node) startSensor(ctx context.Context, s sensors.Sensor) {
	name := s.Name()
	sctx, cancel := context.WithCancel(ctx)
	r := &sensorRun{cancel: cancel, done: make(chan struct{}), state: "ok"}
	n.mu.Lock()
	n.runs[name] = r
	n.mu.Unlock()
	var out sensors.Sink = sink{n: n, name: name}
	if ts := n.limits[name]; len(ts) > 0 {
		out = sensors.WithThresholds(name, ts, out)
	}
	go func() {
		defer close(r.done)
		const minBackoff, maxBackoff = time.Second, 30 * time.Second
		backoff := minBackoff
		for {
			began := time.Now()
			err := s.Run(sctx, out)
			if sctx.Err() != nil {
				return
			}
			if time.Since(began) > maxBackoff {
				// It ran well for a while: this is a new fault, not the
				// same one again, so it gets a quick restart.
				backoff = minBackoff
			}
			if err == nil {
				err = fmt.Errorf("sensor stopped without an error")
			}
			n.Log.Warn("sensor failed; restarting", "sensor", name, "err", err, "in", backoff)
			out.Raise(worldmodel.Event{Kind: "sensor_fault", Priority: worldmodel.Normal, Message: err.Error()})
			select {
			case <-sctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(backoff*2, maxBackoff)
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

func (n *Node) sensorStatus() any {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make(map[string]string, len(n.runs))
	for name, r := range n.runs {
		out[name] = r.state
	}
	return out
}
