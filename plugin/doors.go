package plugin

import (
	"context"
	"encoding/json"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The doors a Host opens onto the running agent. They are interfaces, not
// the node's *agent.Loop, *worldmodel.Model and *tools.Registry: a plugin
// gets what plugins use, and no more (not the loop's lifecycle, a ring to
// write into, or the registry's registration and enabling, which belong to
// the node and the admin tools). Each holds the union of what the plugins
// use; a plugin's own parts declare the narrower interface they consume
// (mqtt.Deps, agent.NewEngine, actuator.Options, record.New, localadmin),
// and these satisfy them.

// Agent is the agent loop as a plugin sees it: commands are submitted to
// it (MQTT, the dashboard), its status read.
type Agent interface {
	Submit(context.Context, agent.Command) (agent.Outcome, error)
	Status() agent.Status
}

// World is the world model as a plugin sees it.
type World interface {
	// The stream: cursors over it (MQTT, the dashboard, the recorder, the
	// skills that react to events), its journal and events by sequence,
	// its counters, and a source's demand (a watched camera is encoded).
	NewCursor(fromStart bool) *worldmodel.Cursor
	Records(sinceSeq uint64, limit int) []worldmodel.Record
	Events(sinceSeq uint64, min worldmodel.Priority, limit int) []worldmodel.Event
	Version() uint64
	Stats() worldmodel.Stats
	Watch(source string) (stop func())

	// What a plugin adds to it: observations (a camera description),
	// events (an e-stop, a resync), journal notes (LLM exchanges), and the
	// actuator and health states the actuators plugin owns.
	Append(worldmodel.Observation) uint64
	Record(worldmodel.Event) worldmodel.Event
	Note(worldmodel.Record) worldmodel.Record
	SetActuator(name, state string)
	SetHealth(component, health string)

	// What it holds now: the latest readings, a window of one source, the
	// sources, the actuator and health states, the summary an LLM reads.
	Latest(source string) (worldmodel.Observation, bool)
	LatestAll() []worldmodel.Observation
	Window(source string, from, to time.Time) []worldmodel.Observation
	Sources() []string
	Actuators() map[string]string
	Health() map[string]string
	Summary(maxBytes int) string
}

// Tools is the tools registry as a plugin sees it: tools are called and
// read here; a plugin brings its own through tools.Provider, never by
// registering into the registry.
type Tools interface {
	Invoke(context.Context, tools.Call) (tools.Result, error)
	Resolve(name string) (tools.Spec, error)
	List() []tools.Spec
	Enabled(name string) bool
	Permitted(caller string, extra []string, perm string) bool
	Validate(name string, params json.RawMessage) (json.RawMessage, error)
	Stats() map[string]tools.History
}
