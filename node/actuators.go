package node

import (
	"context"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The actuators plugin: the board's actuator blocks as skills, the e-stop
// and the audit log. It is always loaded, even on a board without
// actuators, so that estop.* and audit.query exist for MQTT to call.
func init() { RegisterPlugin("actuators", newActuators) }

type actuatorsPlugin struct {
	set *actuator.Set
}

func newActuators(n *Node) (hooks.Plugin, error) {
	settings := actuator.DefaultSettings
	if err := n.Board.Plugins["actuators"].Decode(&settings); err != nil {
		return nil, err
	}
	o := actuator.Options{
		Platform: n.Board.Device.Platform, Model: n.Board.Device.Model,
		Actuators: n.Board.Actuators, Settings: settings,
		World: n.World, Raise: n.Raise, Log: n.Log.With("plugin", "actuators"),
	}
	if n.Store != nil { // a nil *store.Store must not become a non-nil interface
		o.Store = n.Store
	}
	set, err := actuator.New(o)
	if err != nil {
		return nil, err
	}
	return &actuatorsPlugin{set: set}, nil
}

func (p *actuatorsPlugin) Info() hooks.Info {
	return hooks.Info{Name: "actuators", Version: "1",
		Description: "actuator skills on gobot drivers, safety envelope, e-stop and audit log",
		// Start early, stop late: whatever else runs may want to actuate.
		Priority: 100}
}

// OnAgentStart opens the platform adaptor: hardware is touched here, not
// when the node is built, so `edgeagent check` works on any machine.
func (p *actuatorsPlugin) OnAgentStart(ctx context.Context) error { return p.set.Start(ctx) }

// OnAgentStop brings every actuator to its safe state.
func (p *actuatorsPlugin) OnAgentStop(ctx context.Context) error { return p.set.Stop(ctx) }

func (p *actuatorsPlugin) Tools() []tools.Tool { return p.set.Tools() }

func (p *actuatorsPlugin) Status() any { return p.set.Status() }

// HandleCritical is the e-stop path: the node calls it synchronously, before
// the agent loop sees the event; unloading the plugin unhooks it.
func (p *actuatorsPlugin) HandleCritical(e worldmodel.Event) { p.set.HandleCritical(e) }

// Actuators returns the node's actuator set (nil when the plugin is not
// loaded); tests and the sim board's tooling read the sim adaptor through it.
func (n *Node) Actuators() *actuator.Set {
	p, _ := n.Hooks.Get("actuators")
	if ap, ok := p.(*actuatorsPlugin); ok {
		return ap.set
	}
	return nil
}
