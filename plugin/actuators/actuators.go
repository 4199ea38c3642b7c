// Package actuators is the actuators plugin: the board's actuator blocks as
// skills, the e-stop and the audit log. It is always loaded, even on a board
// without actuators, so that estop.* and audit.query exist for MQTT and the
// dashboard to call.
package actuators

import (
	"context"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func init() { plugin.Register("actuators", New) }

// Plugin holds the board's actuator set.
type Plugin struct {
	set *actuator.Set
}

// New builds the actuator set of the host's board (nothing is opened yet).
func New(h plugin.Host) (hooks.Plugin, error) {
	b := h.Board()
	settings := actuator.DefaultSettings
	if err := b.Plugins["actuators"].Decode(&settings); err != nil {
		return nil, err
	}
	set, err := actuator.New(actuator.Options{
		Platform: b.Device.Platform, Model: b.Device.Model,
		Actuators: Configs(b.Actuators), Settings: settings,
		World: h.World(), Raise: h.Raise, Store: h.Store(), Log: h.Log().With("plugin", "actuators"), Clock: h.Clock(),
		Admin: func(tool string) bool {
			s, err := h.Tools().Resolve(tool)
			return err == nil && s.Permission == "admin"
		},
	})
	if err != nil {
		return nil, err
	}
	return &Plugin{set: set}, nil
}

func (p *Plugin) Info() hooks.Info {
	return hooks.Info{Name: "actuators", Version: "1",
		Description: "actuator skills on gobot drivers, safety envelope, e-stop and audit log",
		// Start early, stop late: whatever else runs may want to actuate.
		Priority: 100}
}

// OnAgentStart opens the platform adaptor: hardware is touched here, not
// when the plugin is built, so `edgeagent check` works on any machine.
func (p *Plugin) OnAgentStart(ctx context.Context) error { return p.set.Start(ctx) }

// OnAgentStop brings every actuator to its safe state.
func (p *Plugin) OnAgentStop(ctx context.Context) error { return p.set.Stop(ctx) }

func (p *Plugin) Tools() []tools.Tool { return p.set.Tools() }

// AfterAct audits administration (tools.disable, plugins.load,
// config.reload …) with the physical actions.
func (p *Plugin) AfterAct(_ context.Context, r hooks.ActionResult) {
	p.set.AuditAdmin(r.Action.Caller, r.Action.Tool, r.Action.Params, r.Err)
}

func (p *Plugin) Status() any { return p.set.Status() }

// HandleCritical is the e-stop path: the node calls it synchronously, before
// the agent loop sees the event; unloading the plugin unhooks it.
func (p *Plugin) HandleCritical(e worldmodel.Event) { p.set.HandleCritical(e) }

// Set is the actuator set; tests and the sim board's tooling read the sim
// adaptor through it.
func (p *Plugin) Set() *actuator.Set { return p.set }
