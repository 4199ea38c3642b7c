// Package plugin is the door through which the optional parts of an agent —
// the MQTT control plane, the actuators, the decision engine, the camera
// skills, the dashboard, the recorder — join it. A plugin registers a
// Factory by name from init, as a sensor kind does; the node builds it with a
// Host, the narrow view of the running agent a plugin may use, never with the
// node itself. What a plugin brings besides hooks (tools, sensors, a
// decider, a status component, an e-stop handler) it declares by
// implementing the small interfaces below.
package plugin

import (
	"log/slog"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/registry"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Host is the running agent as a plugin sees it. Its doors onto the loop,
// the world model and the tools registry are interfaces (doors.go).
type Host interface {
	// Board is the board config the agent runs (read only), Dir the
	// directory relative paths in it resolve against.
	Board() *board.Config
	Dir() string
	// BoardFile is the file the board was loaded from ("" when it was not
	// loaded from one): what a plugin that offers to save settings edits,
	// through config.reload {save: true}, never by writing it itself.
	BoardFile() string
	// World is the world model: its rings, its event log and the stream
	// of records every consumer (MQTT, dashboard, recorder) reads by cursor.
	World() World
	// Tools is the tools registry: calls, specs, permissions.
	Tools() Tools
	// Agent is the loop: commands are submitted to it, its status read.
	Agent() Agent
	// Raise records an event, runs the e-stop handlers for Critical ones
	// and interrupts the agent.
	Raise(worldmodel.Event)
	// Plugins are the loaded plugins, for capabilities one plugin offers
	// another (agent.SkillProvider …).
	Plugins() []hooks.Plugin
	Store() store.Store
	Clock() clock.Clock
	Log() *slog.Logger
}

// Factory builds a plugin for a host. It returns hooks.Decline(reason) when
// the plugin does not apply to the board (no camera, LLM disabled …).
type Factory func(Host) (hooks.Plugin, error)

// What a plugin may bring besides hooks and tools (tools.Provider).
type (
	// SensorProvider plugins bring sensors, started and stopped with them.
	SensorProvider interface{ Sensors() []sensors.Sensor }
	// DeciderProvider plugins bring a decider, asked after the fast paths.
	DeciderProvider interface{ Decider() agent.Decider }
	// StatusProvider plugins add a component to agent.status.
	StatusProvider interface{ Status() any }
	// CriticalHandler plugins see every Critical event synchronously, in
	// Raise, before the agent loop does: the e-stop path.
	CriticalHandler interface{ HandleCritical(worldmodel.Event) }
	// ToolNamer plugins name tools in their options (scoped toolsets,
	// skill guides). `edgeagent check` asks them about each name or
	// pattern: missing says what is wrong with one that no loaded tool
	// answers to, and the plugin reports it at its key's file:line:col.
	ToolNamer interface {
		CheckToolNames(missing func(pattern string) (problem string, bad bool)) error
	}
)

var factories = registry.New[Factory](registry.Plugin)

// Register makes a compiled-in plugin available; call it from init.
func Register(name string, f Factory) { factories.Register(name, f) }

// Lookup returns the factory registered under name.
func Lookup(name string) (Factory, bool) { return factories.Lookup(name) }

// Names are the registered plugins, sorted.
func Names() []string { return factories.Names() }
