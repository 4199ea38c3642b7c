package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Command is a request from outside (MQTT, CLI): either an explicit tool
// call or a natural-language text for the decision engine.
type Command struct {
	ID     string          `json:"id"`
	Caller string          `json:"caller"` // permission caller: mqtt, cli …
	Grants []string        `json:"-"`      // extra grants of this requester
	Tool   string          `json:"tool,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Text   string          `json:"text,omitempty"`
	// Speak asks for a spoken reply to a text command, as a voice command
	// always gets (where the board has a voice: the say plugin).
	Speak bool `json:"speak,omitempty"`
	// Via marks a command that came on a fleet's or a group's topic
	// (tools.Via); its command record carries it.
	Via *tools.Via `json:"via,omitempty"`
}

// Perception is what a cycle perceived: why it woke and the world it saw.
type Perception struct {
	Cycle   uint64
	Trigger string            // "heartbeat", "event", "command"
	Event   *worldmodel.Event // the waking event (also set for commands: kind "command")
	Command *Command          // set when a command woke the loop
	Summary string            // bounded world summary
	Context []hooks.Contribution
	Repeats int // coalesced repeats of the event
}

// Step is one tool call of a decision. Steps form a DAG through DependsOn.
type Step struct {
	ID        string          `json:"id"`
	Tool      string          `json:"tool"`
	Params    json.RawMessage `json:"params"`
	DependsOn []string        `json:"depends_on,omitempty"`
}

// Decision is what the plan stage chose.
type Decision struct {
	Path       string   `json:"path"`   // explicit, reflex, local, llm …
	Caller     string   `json:"caller"` // whose permissions the steps run with
	Grants     []string `json:"-"`
	Steps      []Step   `json:"steps"`
	Confidence float64  `json:"confidence"`
	Reason     string   `json:"reason,omitempty"`
	// Trace is the engine's record of how it decided (scenario, intent,
	// candidates, LLM calls …); nil for the fast paths outside the engine
	// (explicit calls, reflexes).
	Trace *Trace `json:"trace,omitempty"`
}

// Decider turns a perception into a decision. It returns ErrNoDecision to
// let the next decider try; an empty decision (no steps) means "nothing to do".
type Decider interface {
	Decide(ctx context.Context, p Perception) (Decision, error)
}

// ErrNoDecision: this decider has nothing to say about the perception.
var ErrNoDecision = errors.New("no decision")

// Chain asks deciders in order; the first that does not decline wins.
// Order matters: fast paths (explicit, reflex, local matcher) before the LLM.
type Chain []Decider

func (c Chain) Decide(ctx context.Context, p Perception) (Decision, error) {
	for _, d := range c {
		dec, err := d.Decide(ctx, p)
		if errors.Is(err, ErrNoDecision) {
			continue
		}
		return dec, err
	}
	return Decision{}, ErrNoDecision
}

// Explicit is the fast path for commands naming a tool: no LLM involved.
type Explicit struct{}

func (Explicit) Decide(_ context.Context, p Perception) (Decision, error) {
	if p.Command == nil || p.Command.Tool == "" {
		return Decision{}, ErrNoDecision
	}
	c := p.Command
	return Decision{
		Path: "explicit", Caller: c.Caller, Grants: c.Grants, Confidence: 1,
		Steps: []Step{{ID: "1", Tool: c.Tool, Params: c.Params}},
	}, nil
}

// Reflex is a board-config rule: on an event, call a tool.
type Reflex struct {
	On       string // "<kind>" or "<source>/<kind>"
	Tool     string
	Params   json.RawMessage
	Cooldown time.Duration
}

func (r Reflex) matches(e *worldmodel.Event) bool {
	if src, kind, ok := strings.Cut(r.On, "/"); ok {
		return e.Source == src && e.Kind == kind
	}
	return e.Kind == r.On
}

// Reflexes is the fast path for configured reactions to events. Every
// matching reflex fires (each one a step), subject to its cooldown.
type Reflexes struct {
	rules []Reflex
	mu    sync.Mutex
	last  []time.Time
	now   func() time.Time
}

// NewReflexes builds the reflex decider.
func NewReflexes(rules []Reflex) *Reflexes {
	return &Reflexes{rules: rules, last: make([]time.Time, len(rules)), now: clock.Real().Now}
}

// UseClock makes cooldowns count on the caller's clock (a replay runs on a
// virtual one), instead of the wall clock.
func (r *Reflexes) UseClock(now func() time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.now = now
}

func (r *Reflexes) Decide(_ context.Context, p Perception) (Decision, error) {
	if p.Event == nil || p.Command != nil {
		return Decision{}, ErrNoDecision
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	var steps []Step
	for i, rule := range r.rules {
		if !rule.matches(p.Event) {
			continue
		}
		if !r.last[i].IsZero() && now.Sub(r.last[i]) < rule.Cooldown {
			continue
		}
		r.last[i] = now
		steps = append(steps, Step{ID: "reflex" + strconv.Itoa(i), Tool: rule.Tool, Params: rule.Params})
	}
	if len(steps) == 0 {
		return Decision{}, ErrNoDecision
	}
	return Decision{Path: "reflex", Caller: "reflex", Confidence: 1, Steps: steps}, nil
}
