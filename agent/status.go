package agent

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/edgeagent/edgeagent/tools"
)

// Status is the live state of the loop, reported by the agent.status tool.
type Status struct {
	State       string         `json:"state"` // idle | running
	Cycle       uint64         `json:"cycle,omitempty"`
	Trigger     string         `json:"trigger,omitempty"`
	RunningFor  string         `json:"running_for,omitempty"`
	Uptime      string         `json:"uptime"`
	Cycles      uint64         `json:"cycles"`
	Preemptions uint64         `json:"preemptions"`
	Queue       BusStats       `json:"queue"`
	Last        *Outcome       `json:"last,omitempty"`
	Components  map[string]any `json:"components,omitempty"`
}

// Report adds a component to the status (sensors, llm, mqtt …). fn is called
// on every status request and must be cheap and safe for concurrent use.
func (l *Loop) Report(name string, fn func() any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reporters[name] = fn
}

// Status snapshots the loop.
func (l *Loop) Status() Status {
	l.mu.Lock()
	s := Status{State: "idle", Uptime: l.cfg.Clock.Since(l.started).Round(time.Millisecond).String(), Last: l.last}
	if l.current != nil {
		s.State, s.Cycle, s.Trigger = "running", l.curCycle, describeTrigger(l.current)
		s.RunningFor = l.cfg.Clock.Since(l.curSince).Round(time.Microsecond).String()
	}
	reporters := maps.Clone(l.reporters)
	l.mu.Unlock()
	s.Cycles = l.cycles.Load()
	s.Preemptions = l.preemptions.Load()
	s.Queue = l.bus.Stats()
	if len(reporters) > 0 {
		s.Components = make(map[string]any, len(reporters))
		for _, name := range slices.Sorted(maps.Keys(reporters)) {
			s.Components[name] = reporters[name]()
		}
	}
	return s
}

// Steady reports the running cycle's number, and whether nothing queued
// outranks it: then nothing preempts it until an interrupt of a higher
// priority arrives. A replay uses it to tell a cycle that waits for what
// only a later input brings from one about to be preempted. The queue is
// read before the running cycle: a preemption that has begun (the loop
// cancels the cycle before it takes the preemptor off the queue) shows in
// one or the other.
func (l *Loop) Steady() (cycle uint64, ok bool) {
	top, queued := l.bus.Top()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == nil {
		return 0, false
	}
	return l.curCycle, !queued || top.Priority <= l.current.Priority()
}

// StatusTool is the agent.status skill.
func (l *Loop) StatusTool() tools.Tool {
	return tools.Func(tools.Spec{
		Name:        "agent.status",
		Description: "Live status of the agent: current cycle, uptime, cycles run, preemptions, interrupt queue, last outcome and the state of each component (sensors, LLM, MQTT).",
		Permission:  "read",
		Scenarios:   []string{"maintenance"},
	}, func(context.Context, json.RawMessage) (tools.Result, error) {
		return tools.Result{Value: l.Status()}, nil
	})
}

// Busy reports how long the running cycle has been running (0 when idle).
// The systemd watchdog uses it: a cycle far past its deadline means the loop
// is wedged and the service should be restarted.
func (l *Loop) Busy() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.current == nil {
		return 0
	}
	return l.cfg.Clock.Since(l.curSince)
}
