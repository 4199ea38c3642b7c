package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The motive step runs on a heartbeat with no event pending. It looks at
// the world and decides whether anything needs doing:
//
//   - Goals from the board config (a reading past a bound) fire their text
//     as if someone had said it; the local matcher may answer it at zero
//     LLM calls, otherwise the five steps do. A goal fires once when it is
//     crossed and again every GoalRefire while it stays unmet.
//   - With Review on, when the world changed since the last heartbeat (new
//     events of Normal priority or above, a component's health), one call
//     asks the model whether anything needs doing; a task it names goes
//     through the five steps.
//   - Otherwise the agent stays idle, at zero LLM calls.

// motiveState remembers what the motive saw.
type motiveState struct {
	mu      sync.Mutex
	fired   map[string]time.Time
	lastSeq uint64
	health  string
	primed  bool
}

// Goal is a motive: when Source passes a bound, Text is perceived.
type Goal struct {
	Name   string
	Source string   // world-model source, e.g. "env.temperature"
	Above  *float64 // fires when the value rises above
	Below  *float64 // fires when the value falls below
	Text   string   // e.g. "turn on the fan"
}

func (g Goal) check() error {
	switch {
	case g.Name == "" || g.Source == "" || strings.TrimSpace(g.Text) == "":
		return errors.New("name, source and text are required")
	case g.Above == nil && g.Below == nil:
		return errors.New("set above or below")
	}
	return nil
}

// unmet reports whether v violates the goal, and says how.
func (g Goal) unmet(v float64) (bool, string) {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
	if g.Above != nil && v > *g.Above {
		return true, fmt.Sprintf("%s is %s, above %s", g.Source, f(v), f(*g.Above))
	}
	if g.Below != nil && v < *g.Below {
		return true, fmt.Sprintf("%s is %s, below %s", g.Source, f(v), f(*g.Below))
	}
	return false, ""
}

// heartbeat is the motive step.
func (e *Engine) heartbeat(ctx context.Context, p Perception) (Decision, error) {
	if e.world == nil {
		return Decision{}, ErrNoDecision
	}
	now := e.cfg.Clock.Now()
	for _, g := range e.cfg.Goals {
		o, ok := e.world.Latest(g.Source)
		if !ok || o.Kind != worldmodel.Reading {
			continue
		}
		unmet, why := g.unmet(o.Value)
		e.motive.mu.Lock()
		at, fired := e.motive.fired[g.Name]
		switch {
		case !unmet:
			delete(e.motive.fired, g.Name)
			e.motive.mu.Unlock()
			continue
		case fired && now.Sub(at) < e.cfg.GoalRefire:
			e.motive.mu.Unlock()
			continue
		}
		e.motive.fired[g.Name] = now
		e.motive.mu.Unlock()
		return e.decide(ctx, p, request{text: g.Text, note: "goal " + g.Name + ": " + why, kind: "goal " + g.Name,
			requester: "motive", motive: g.Name, matcher: true})
	}

	if !e.worldChanged() || !e.cfg.Review || e.llm == nil {
		return Decision{}, ErrNoDecision // idle: nothing new, zero LLM calls
	}
	return e.review(ctx, p)
}

// worldChanged reports whether anything worth a thought happened since the
// last heartbeat: new events of Normal priority or above (other than the
// agent's own bookkeeping), or a change in component health. Readings
// alone do not count: sensors report all the time, and goals watch them.
func (e *Engine) worldChanged() bool {
	m := &e.motive
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := false
	for {
		evs := e.world.Events(m.lastSeq, worldmodel.Normal, 64)
		for _, ev := range evs {
			m.lastSeq = max(m.lastSeq, ev.Seq)
			if ev.Source != "agent" {
				changed = true
			}
		}
		if len(evs) < 64 {
			break
		}
	}
	health := e.world.Health()
	keys := slices.Sorted(maps.Keys(health))
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + health[k] + ";")
	}
	if b.String() != m.health {
		changed = true
		m.health = b.String()
	}
	if !m.primed {
		// The first heartbeat has nothing to compare with: the world as
		// found at start is not news.
		m.primed = true
		return false
	}
	return changed
}

var reviewSchema = json.RawMessage(`{"type":"object","properties":{"act":{"type":"boolean"},` +
	`"task":{"type":"string","maxLength":200}},"required":["act","task"],"additionalProperties":false}`)

// review asks the model whether the changed world needs anything done.
func (e *Engine) review(ctx context.Context, p Perception) (Decision, error) {
	tr := newTrace(e.cfg.Clock, "heartbeat: the world changed", "motive")
	entries := e.index.sync(e.specs(nil, true))
	fr := e.frame(entries, e.scoped(entries, nil), nil, p)
	req := llm.Request{Purpose: "motive", System: e.prompts.Load().system, Schema: reviewSchema, MaxTokens: e.cfg.MaxTokens,
		Messages: []llm.Message{{Role: "user", Content: reviewPrompt(fr)}}}
	resp, err := e.generate(ctx, tr, req)
	tr.lap("motive")
	dec := Decision{Path: "llm", Caller: e.cfg.Caller, Trace: tr}
	tr.Path, tr.Motive = "llm", "review"
	if ctx.Err() != nil {
		tr.finish()
		return e.stopped(ctx, dec, tr)
	}
	var ans struct {
		Act  bool   `json:"act"`
		Task string `json:"task"`
	}
	if err == nil {
		err = strictJSON(resp.Content, &ans)
	}
	if err != nil {
		tr.finish()
		if errors.Is(err, llm.ErrUnavailable) {
			return Decision{}, ErrNoDecision // the fast paths carry on; status says why
		}
		return e.refuse(dec, tr, "motive review: "+err.Error())
	}
	task := strings.TrimSpace(ans.Task)
	if !ans.Act || task == "" {
		tr.note("the model sees nothing to do")
		tr.finish()
		return Decision{}, ErrNoDecision
	}
	tr.Perception = task
	tr.note("motive review: " + task)
	return e.decide(ctx, p, request{text: task, kind: "motive", note: "the agent noticed a change and chose this task",
		requester: "motive", motive: "review", matcher: true, trace: tr})
}
