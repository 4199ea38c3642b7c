package replay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// input is one recorded thing that came from outside the agent: an
// observation or an event, fed back into the node at its time.
type input struct {
	t     time.Time
	obs   *worldmodel.Observation
	event *worldmodel.Event
	call  *tools.Call    // a tool called from outside: MQTT, the CLI or the dashboard
	cmd   *agent.Command // a command submitted to the agent: a text command
	det   *detector      // obs is a frame or audio for these detectors
	// reload is a board reload: the node is rebuilt from its board.
	reload *record.Reloaded
}

// replayedCallers are the callers whose tool calls came from outside the
// agent, so a replay makes them again; the agent's own calls (reflex, llm,
// motive) it must make by itself.
var replayedCallers = map[string]bool{"mqtt": true, "cli": true, "web": true}

// notReplayed are administration tools a replay must not run: they would
// rebuild or reconfigure the replay itself.
var notReplayed = map[string]bool{
	"config.reload": true, "plugins.load": true, "plugins.unload": true,
	"record.start": true, "record.stop": true,
}

// derived are the events the agent raises itself: a replay must produce
// them again, so they are not fed.
var derived = map[string]bool{
	"decision": true, "preempted": true, "actuators_stopped": true, "actuator_stopped_late": true, "deadman_stop": true,
	"estop_reset": true, // raised by estop.reset, a tool call the replay makes again
}

// raisedByTools are the sources of events a tool raises when called
// (estop.trigger's e-stop): the replay makes the call again, so they are
// not fed.
var raisedByTools = map[string]bool{"skill": true}

// tape is what a replay needs from a recording.
type tape struct {
	info     *recording.Info
	inputs   []input
	actions  []Action // decisions, tool calls and actuator writes, as recorded
	exchange []exchange
	embeds   embeddings
	frames   int
	// holds are the cycles preempted before their steps (see probe).
	holds map[cycleKey]bool
}

// preemptedSteps marks a decision's step that a preemption skipped (the
// loop's runSteps words it so).
const preemptedSteps = "skipped: preempted by "

// stoppedSteps marks a decision's step that the node's stop skipped: its
// loop's context was cancelled between the cycle's plan and its steps.
var stoppedSteps = "skipped: " + context.Canceled.Error()

// exchange is a recorded LLM call: the prompt and the raw answer.
type exchange struct {
	Purpose  string          `json:"purpose"`
	System   string          `json:"system"`
	Messages []llmMessage    `json:"messages"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	Answer   string          `json:"answer"`
	Error    string          `json:"error,omitempty"`
	Duration float64         `json:"duration_ms"` // how long the call took, on the run's clock
}

type llmMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// load reads a recording. actuators are the board's actuator names: what
// their sources observe (headlight.on, pan.angle) the replayed actuators
// observe again, so it is not fed. dets take their inputs and outputs.
func load(path string, actuators map[string]bool, frames bool, dets []*detector) (*tape, error) {
	tp := &tape{holds: map[cycleKey]bool{}}
	var bad error
	reloads := 0
	// stopping: a reload was read and no decision since. The node stops
	// for a reload after its record, so a decision that its stop cut off
	// comes next, and is the previous node's cycle.
	stopping := false
	info, err := recording.Read(path, func(m recording.Msg) error {
		if m.Channel.Kind == record.KindRecord && strings.HasPrefix(m.Channel.Topic, embedTopic) {
			if err := tp.embeds.load(m.Data); err != nil {
				bad = fmt.Errorf("%s: message on %s at %s: %w", path, m.Channel.Topic, m.Time.UTC().Format(time.RFC3339Nano), err)
				return recording.ErrStop
			}
			return nil
		}
		in, claimed, err := claim(m, dets)
		var act *Action
		var x *exchange
		if !claimed {
			in, act, x, err = decode(m, actuators, frames)
		}
		if err != nil {
			bad = fmt.Errorf("%s: message on %s at %s: %w", path, m.Channel.Topic, m.Time.UTC().Format(time.RFC3339Nano), err)
			return recording.ErrStop
		}
		if in != nil {
			if in.obs != nil && in.obs.Kind == worldmodel.BlobRef && in.det == nil {
				tp.frames++
			}
			tp.inputs = append(tp.inputs, *in)
			if in.call != nil {
				// A call is recorded when it ends: it starts its
				// duration earlier, before what was fed meanwhile.
				for i := len(tp.inputs) - 1; i > 0 && tp.inputs[i-1].t.After(tp.inputs[i].t); i-- {
					tp.inputs[i-1], tp.inputs[i] = tp.inputs[i], tp.inputs[i-1]
				}
			}
		}
		if in != nil && in.reload != nil {
			reloads++
			stopping = true
		}
		if act != nil {
			tp.actions = append(tp.actions, *act)
			if act.Kind == "decision" {
				tp.hold(*act, reloads, stopping)
				stopping = false
			}
		}
		if x != nil {
			tp.exchange = append(tp.exchange, *x)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if bad != nil {
		return nil, bad
	}
	tp.info = info
	return tp, nil
}

// hold notes a recorded decision whose steps a race skipped, so that the
// replay keeps its cycle after the plan until the same thing ends it (see
// probe): a preemption, or, for a decision read just after a reload
// record, the previous node's stop for that reload. A replay feeds the
// reload only once the agent has handled what came before, so that cycle
// would otherwise run its steps (seen once in TestSimBoardRecordingsReplay:
// "headlight.set: skipped: context canceled" recorded, the write replayed).
func (tp *tape) hold(d Action, reloads int, stopping bool) {
	switch {
	case strings.Contains(d.What, preemptedSteps):
		tp.holds[cycleKey{reloads, d.cycle}] = true
	case stopping && strings.Contains(d.What, stoppedSteps):
		tp.holds[cycleKey{reloads - 1, d.cycle}] = true
	}
}

// message is the union of the recorder's JSON messages.
type message struct {
	Seq      uint64          `json:"seq"`
	Source   string          `json:"source"`
	Value    float64         `json:"value"`
	Unit     string          `json:"unit"`
	Text     string          `json:"text"`
	Kind     string          `json:"kind"`
	Priority string          `json:"priority"`
	Message  string          `json:"message"`
	Data     json.RawMessage `json:"data"`
	Format   string          `json:"format"`
}

func decode(m recording.Msg, actuators map[string]bool, frames bool) (*input, *Action, *exchange, error) {
	c := m.Channel
	switch c.Kind {
	case record.KindObservation, record.KindImage:
		if actuators[strings.SplitN(c.Source, ".", 2)[0]] {
			return nil, nil, nil, nil
		}
		if c.Kind == record.KindImage && !frames {
			return nil, nil, nil, nil
		}
	case record.KindEvent, record.KindRecord:
	default: // annotations (drawn from events) and the recorder's counters
		return nil, nil, nil, nil
	}
	var msg message
	if err := json.Unmarshal(m.Data, &msg); err != nil {
		return nil, nil, nil, fmt.Errorf("not a recorder message")
	}
	switch {
	case c.Kind == record.KindImage:
		b, err := blobOf(m)
		if err != nil {
			return nil, nil, nil, err
		}
		return &input{t: m.Time, obs: &worldmodel.Observation{Time: m.Time, Source: c.Source, Kind: worldmodel.BlobRef, Blob: b}}, nil, nil, nil
	case c.Kind == record.KindObservation:
		o := &worldmodel.Observation{Time: m.Time, Source: c.Source}
		switch c.Schema {
		case record.SchemaReading:
			o.Kind, o.Value, o.Unit = worldmodel.Reading, msg.Value, msg.Unit
		case record.SchemaText:
			o.Kind, o.Text = worldmodel.Text, msg.Text
		case record.SchemaEvent:
			ev, err := toEvent(m.Time, msg)
			if err != nil {
				return nil, nil, nil, err
			}
			o.Kind, o.Event = worldmodel.EventRef, ev
		default: // blobs other than frames: only their size was kept
			return nil, nil, nil, nil
		}
		return &input{t: m.Time, obs: o}, nil, nil, nil
	case c.Kind == record.KindEvent:
		ev, err := toEvent(m.Time, msg)
		if err != nil {
			return nil, nil, nil, err
		}
		switch ev.Kind {
		case "decision":
			a := decisionAction(m.Time, ev.Message, ev.Data)
			return nil, &a, nil, nil
		case "actuators_stopped":
			a := estopAction(m.Time, ev.Priority, ev.Data)
			return nil, &a, nil, nil
		}
		if derived[ev.Kind] || ev.Source == "agent" || raisedByTools[ev.Source] {
			return nil, nil, nil, nil
		}
		return &input{t: m.Time, event: ev}, nil, nil, nil
	}
	return decodeRecord(m, msg)
}

// decodeRecord reads a journal record: what the agent did (a tool call, an
// actuator write, an LLM exchange) or an input (a tool called from
// outside, a command, a reload).
func decodeRecord(m recording.Msg, msg message) (*input, *Action, *exchange, error) {
	switch msg.Kind {
	case "tool_call":
		a := recordAction(m.Time, msg.Kind, msg.Source, msg.Data)
		var c struct {
			Caller   string          `json:"caller"`
			Via      *tools.Via      `json:"via"` // a fleet's or group's command: made again with its mark
			Grants   []string        `json:"grants"`
			Cycle    uint64          `json:"cycle"`
			Params   json.RawMessage `json:"params"`
			Duration float64         `json:"duration_ms"`
		}
		if msg.Source == "config.reload" {
			// An input, whose effect is the reload record (applied, not
			// compared); its own record may or may not make it into the
			// recording before the node stops for the reload.
			return nil, nil, nil, nil
		}
		if json.Unmarshal(msg.Data, &c) != nil || !replayedCallers[c.Caller] || c.Cycle != 0 || notReplayed[msg.Source] {
			return nil, &a, nil, nil
		}
		start := m.Time.Add(-time.Duration(c.Duration * float64(time.Millisecond)))
		return &input{t: start, call: &tools.Call{Caller: c.Caller, Via: c.Via, Grants: c.Grants, Tool: msg.Source, Params: c.Params}}, &a, nil, nil
	case worldmodel.RecordActuator:
		a := recordAction(m.Time, msg.Kind, msg.Source, msg.Data)
		return nil, &a, nil, nil
	case agent.RecordCommand:
		var c struct {
			agent.Command
			Grants []string `json:"grants"`
		}
		if err := json.Unmarshal(msg.Data, &c); err != nil {
			return nil, nil, nil, fmt.Errorf("a command record without a command")
		}
		c.Command.Grants = c.Grants
		return &input{t: m.Time, cmd: &c.Command}, nil, nil, nil
	case record.ReloadRecord:
		var r record.Reloaded
		if err := json.Unmarshal(msg.Data, &r); err != nil || r.Board == "" {
			return nil, nil, nil, fmt.Errorf("a reload record without a board")
		}
		return &input{t: m.Time, reload: &r}, nil, nil, nil
	case "llm":
		var x exchange
		if err := json.Unmarshal(msg.Data, &x); err != nil {
			return nil, nil, nil, fmt.Errorf("an llm record without an exchange")
		}
		a := llmAction(m.Time, msg.Source, x)
		return nil, &a, &x, nil
	}
	return nil, nil, nil, nil
}

func toEvent(t time.Time, msg message) (*worldmodel.Event, error) {
	prio, err := worldmodel.ParsePriority(msg.Priority)
	if err != nil {
		return nil, err
	}
	ev := &worldmodel.Event{Time: t, Kind: msg.Kind, Source: msg.Source, Priority: prio, Message: msg.Message}
	if len(msg.Data) > 0 && string(msg.Data) != "null" {
		if err := json.Unmarshal(msg.Data, &ev.Data); err != nil {
			return nil, fmt.Errorf("event data is not an object")
		}
	}
	return ev, nil
}
