package supervise

import (
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// sink is what one sensor writes to: the world model and the interrupt bus,
// with the sensor's name filled in and its health tracked.
type sink struct {
	v    *Supervisor
	name string
}

func (s sink) Observe(o worldmodel.Observation) { s.v.world.Append(o) }

// Watched implements sensors.Watcher: the dashboard watches live frames.
func (s sink) Watched(source string) bool { return s.v.world.Watched(source) }

func (s sink) Raise(e worldmodel.Event) {
	if e.Source == "" {
		e.Source = s.name
	}
	switch e.Kind {
	case sensors.EventFault:
		s.v.world.SetHealth(s.name, "degraded: "+e.Message)
	case sensors.EventRecovered:
		s.v.world.SetHealth(s.name, "ok")
	}
	s.v.raise(e)
}
