// Package agent is the agent loop: a priority interrupt bus, cycles of
// sense → plan → act → reflect under their own contexts, preemption of a
// running cycle by a more urgent event, and the fast-path deciders (explicit
// tool calls, reflexes). Richer deciders (the LLM engine) plug in through the
// Decider interface.
package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Errors a waiting command can get instead of an outcome.
var (
	ErrDropped = errors.New("agent: interrupt queue full, command dropped")
	ErrStopped = errors.New("agent: loop stopped")
)

// PreemptedError is the cancellation cause of a preempted cycle.
type PreemptedError struct{ By worldmodel.Event }

func (e *PreemptedError) Error() string {
	return fmt.Sprintf("preempted by %s %s", e.By.Priority, e.By.Key())
}

// Config tunes the loop.
type Config struct {
	Heartbeat    time.Duration // wake up this often with nothing pending (default 10s)
	Queue        int           // interrupt bus capacity (default 64)
	CycleTimeout time.Duration // deadline of one cycle (default 30s)
	SummaryBytes int           // world summary budget at sense time (default 2048)
	// Clock runs the heartbeat and stamps commands (default: the wall
	// clock; a replay gives its virtual one).
	Clock clock.Clock
}

// Outcome is the result of one cycle.
type Outcome struct {
	Cycle     uint64        `json:"cycle"`
	Trigger   string        `json:"trigger"`
	Decision  *Decision     `json:"decision,omitempty"`
	Steps     []StepResult  `json:"steps,omitempty"`
	Preempted string        `json:"preempted,omitempty"` // what preempted it
	Err       error         `json:"-"`
	Error     string        `json:"error,omitempty"`
	Duration  time.Duration `json:"duration_ns"`
}

// Loop is the agent loop. Create with New, run with Run.
type Loop struct {
	cfg   Config
	bus   *Bus
	world *worldmodel.Model
	tools *tools.Registry
	hooks *hooks.Manager
	log   *slog.Logger

	decider atomic.Value // holds deciderBox

	cycles      atomic.Uint64
	preemptions atomic.Uint64
	started     time.Time
	stopped     chan struct{}

	mu        sync.Mutex
	current   *Interrupt
	curCycle  uint64
	curSince  time.Time
	last      *Outcome
	reporters map[string]func() any
}

type deciderBox struct{ d Decider }

// New builds a loop. The fast paths (explicit calls) are installed; use
// SetDecider to add reflexes and richer deciders.
func New(cfg Config, world *worldmodel.Model, reg *tools.Registry, hk *hooks.Manager, log *slog.Logger) *Loop {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = 10 * time.Second
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 64
	}
	if cfg.CycleTimeout <= 0 {
		cfg.CycleTimeout = 30 * time.Second
	}
	if cfg.SummaryBytes <= 0 {
		cfg.SummaryBytes = 2048
	}
	if log == nil {
		log = slog.Default()
	}
	cfg.Clock = clock.Or(cfg.Clock)
	l := &Loop{cfg: cfg, bus: NewBus(cfg.Queue, cfg.Clock), world: world, tools: reg, hooks: hk, log: log,
		stopped: make(chan struct{}), reporters: map[string]func() any{}, started: cfg.Clock.Now()}
	l.SetDecider(Explicit{})
	return l
}

// SetDecider replaces the decision stage. Safe while running: the next
// cycle uses it.
func (l *Loop) SetDecider(d Decider) { l.decider.Store(deciderBox{d}) }

// Interrupt queues an event without blocking; false when it was dropped.
func (l *Loop) Interrupt(ev worldmodel.Event) bool {
	return l.bus.Push(&Interrupt{Event: ev})
}

// Submit queues a command at Normal priority and waits for its cycle.
func (l *Loop) Submit(ctx context.Context, cmd Command) (Outcome, error) {
	what := cmd.Tool
	if what == "" {
		what = cmd.Text
	}
	it := &Interrupt{
		Event:   worldmodel.Event{Time: l.cfg.Clock.Now(), Kind: "command", Source: cmd.Caller, Priority: worldmodel.Normal, Message: what},
		Command: &cmd,
		reply:   make(chan Outcome, 1),
	}
	select {
	case <-l.stopped:
		return Outcome{}, ErrStopped
	default:
	}
	l.journal(cmd)
	l.bus.Push(it)
	select {
	case out := <-it.reply:
		return out, out.Err
	case <-ctx.Done():
		return Outcome{}, ctx.Err()
	case <-l.stopped:
		// Run drains the bus when it stops, so the reply may be there too.
		select {
		case out := <-it.reply:
			return out, out.Err
		default:
			return Outcome{}, ErrStopped
		}
	}
}

// RecordCommand is the journal record of a command submitted to the loop
// (Data: the Command with its grants): an input that can change a
// decision, so it is in the stream, and a replay submits it again.
const RecordCommand = "command"

type commandRecord struct {
	Command
	Grants []string `json:"grants,omitempty"`
}

func (l *Loop) journal(cmd Command) {
	if l.world == nil {
		return
	}
	if data, err := json.Marshal(commandRecord{cmd, cmd.Grants}); err == nil { // params are JSON already
		l.world.Note(worldmodel.Record{Kind: RecordCommand, Source: cmd.Caller, Data: data})
	}
}

// Run drives the loop until ctx ends. It returns after the running cycle
// has stopped; waiting commands get ErrStopped.
func (l *Loop) Run(ctx context.Context) error {
	defer close(l.stopped)
	defer l.bus.drain(ErrStopped)
	hb := l.cfg.Clock.NewTicker(l.cfg.Heartbeat)
	defer hb.Stop()
	for {
		it, ok := l.bus.Pop()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-l.bus.Ready():
				continue
			case t := <-hb.C():
				it = &Interrupt{Event: worldmodel.Event{Time: t, Kind: "heartbeat", Source: "agent", Priority: worldmodel.Low}}
			}
		}
		if ctx.Err() != nil {
			it.fail(ErrStopped)
			return nil
		}
		l.runCycle(ctx, it)
	}
}

// runCycle runs one cycle in its own goroutine and context, watching the bus
// for anything more urgent while it runs.
func (l *Loop) runCycle(ctx context.Context, it *Interrupt) {
	n := l.cycles.Add(1)
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	cctx, cancelTimeout := clock.WithTimeout(cctx, l.cfg.Clock, l.cfg.CycleTimeout)
	defer cancelTimeout()

	l.mu.Lock()
	l.current, l.curCycle, l.curSince = it, n, l.cfg.Clock.Now()
	l.mu.Unlock()

	done := make(chan Outcome, 1)
	go func() { done <- l.cycle(cctx, n, it) }()

	var out Outcome
	var preemptor *PreemptedError
wait:
	for {
		select {
		case out = <-done:
			break wait
		case <-l.bus.Ready():
			if top, ok := l.bus.Top(); ok && top.Priority > it.Priority() {
				preemptor = &PreemptedError{By: top}
				cancel(preemptor)
				out = <-done
				break wait
			}
		case <-ctx.Done():
			cancel(ctx.Err())
			out = <-done
			break wait
		}
	}
	if preemptor != nil {
		l.preemptions.Add(1)
		out.Preempted = preemptor.By.Key()
		if out.Err == nil {
			out.Err = preemptor
		}
		l.world.Record(worldmodel.Event{
			Kind: "preempted", Source: "agent", Priority: worldmodel.Low,
			Message: fmt.Sprintf("cycle %d (%s %s) %s", n, it.Priority(), describeTrigger(it), preemptor.Error()),
			Data:    map[string]any{"cycle": n, "by": preemptor.By.Key(), "by_priority": preemptor.By.Priority.String()},
		})
		// The loop's Pop will see the preemptor next; re-signal so nothing waits.
		l.bus.signal()
	}
	if out.Err != nil {
		out.Error = out.Err.Error()
	}
	l.mu.Lock()
	l.current = nil
	if it.Event.Kind != "heartbeat" || out.Decision != nil {
		l.last = &out
	}
	l.mu.Unlock()
	it.deliver(out)
}

func describeTrigger(it *Interrupt) string {
	switch {
	case it.Command != nil && it.Command.Tool != "":
		return "command " + it.Command.ID + " " + it.Command.Tool
	case it.Command != nil:
		return fmt.Sprintf("command %s %q", it.Command.ID, it.Command.Text)
	case it.Event.Kind == "heartbeat":
		return "heartbeat"
	}
	return "event " + it.Event.Key()
}

// cycle is sense → plan → act → reflect for one interrupt.
func (l *Loop) cycle(ctx context.Context, n uint64, it *Interrupt) Outcome {
	start := l.cfg.Clock.Now()
	out := Outcome{Cycle: n, Trigger: describeTrigger(it)}

	// sense
	sense := hooks.Sense{Cycle: n, Trigger: out.Trigger, Summary: l.world.Summary(l.cfg.SummaryBytes),
		Speak: it.Command != nil && it.Command.Speak}
	if err := l.hooks.BeforeSense(ctx, &sense); err != nil {
		l.failure(ctx, "before_sense", err)
	}
	l.hooks.AfterSense(ctx, sense)
	p := l.perceive(n, it, sense.Summary)

	// plan
	plan := hooks.Plan{Cycle: n, Perception: out.Trigger}
	if err := l.hooks.BeforePlan(ctx, &plan); err != nil {
		l.failure(ctx, "before_plan", err)
	}
	p.Context = plan.Context
	box, _ := l.decider.Load().(deciderBox)
	dec, err := box.d.Decide(ctx, p)
	switch {
	case errors.Is(err, ErrNoDecision) && it.Command != nil && it.Command.Text != "":
		err = errors.New("no decision engine: text commands need the LLM engine, which is not configured or not available")
	case errors.Is(err, ErrNoDecision):
		err = nil // nothing to do: an idle heartbeat or an event without a reflex
	case err == nil:
		err = CheckPlan(dec.Steps)
		out.Decision = &dec
	case dec.Path != "":
		// A refusal, or a decision stopped half way: nothing runs, but the
		// decider's trace is kept and recorded.
		out.Decision = &dec
	}
	hd := hooks.Decision{Cycle: n, Path: dec.Path, Err: err}
	for _, s := range dec.Steps {
		hd.Steps = append(hd.Steps, hooks.Action{Cycle: n, Caller: dec.Caller, Tool: s.Tool, Params: s.Params})
	}
	l.hooks.AfterPlan(ctx, hd)
	if err != nil {
		l.failure(ctx, "plan", err)
		out.Err = err
	}

	// act
	if err == nil && out.Decision != nil && len(dec.Steps) > 0 {
		out.Steps = runSteps(ctx, l.cfg.Clock, l.tools, dec, n)
	}

	// reflect: runs even after a preemption so that what happened is kept,
	// under a short context of its own.
	rctx, cancel := clock.WithTimeout(context.WithoutCancel(ctx), l.cfg.Clock, time.Second)
	defer cancel()
	refl := hooks.Reflection{Cycle: n, Err: out.Err}
	var pe *PreemptedError
	refl.Preempted = errors.As(context.Cause(ctx), &pe)
	for _, s := range out.Steps {
		ar := hooks.ActionResult{Action: hooks.Action{Cycle: n, Caller: dec.Caller, Tool: s.Tool, Params: s.Params}, Duration: s.Duration}
		if s.Error != "" {
			ar.Err = errors.New(s.Error)
		}
		refl.Results = append(refl.Results, ar)
	}
	if err := l.hooks.BeforeReflect(rctx, &refl); err != nil {
		l.failure(rctx, "before_reflect", err)
	}
	out.Duration = l.cfg.Clock.Since(start)
	if out.Err == nil {
		if cerr := context.Cause(ctx); cerr != nil && ctx.Err() != nil {
			out.Err = cerr
		}
	}
	if out.Decision != nil {
		l.recordDecision(out)
	}
	l.hooks.AfterReflect(rctx, refl)
	return out
}

// perceive turns an interrupt into the decider's input. A voice_command
// event (wake word + transcript) becomes a text command.
func (l *Loop) perceive(n uint64, it *Interrupt, summary string) Perception {
	ev := it.Event
	p := Perception{Cycle: n, Event: &ev, Command: it.Command, Summary: summary, Repeats: it.Repeats}
	switch {
	case it.Command != nil:
		p.Trigger = "command"
	case ev.Kind == "heartbeat":
		p.Trigger, p.Event = "heartbeat", nil
	default:
		p.Trigger = "event"
		if text, ok := ev.Data["text"].(string); ok && ev.Kind == "voice_command" && strings.TrimSpace(text) != "" {
			p.Command = &Command{ID: fmt.Sprintf("voice-%d", ev.Seq), Caller: "voice", Text: text}
		}
	}
	return p
}

func (l *Loop) recordDecision(out Outcome) {
	var parts []string
	for _, s := range out.Steps {
		state := "ok"
		if s.Error != "" {
			state = s.Error
		}
		parts = append(parts, s.Tool+": "+state)
	}
	if len(parts) == 0 && out.Err != nil {
		parts = append(parts, "nothing run: "+out.Err.Error())
	}
	msg := fmt.Sprintf("cycle %d %s via %s: %s", out.Cycle, out.Trigger, out.Decision.Path, strings.Join(parts, "; "))
	var trace any // a nil *Trace would be a non-nil value in the map
	if out.Decision.Trace != nil {
		trace = out.Decision.Trace
	}
	l.world.Record(worldmodel.Event{Kind: "decision", Source: "agent", Priority: worldmodel.Low, Message: msg,
		Data: map[string]any{"cycle": out.Cycle, "path": out.Decision.Path, "steps": out.Decision.Steps, "trace": trace}})
	l.log.Info("decision", "cycle", out.Cycle, "trigger", out.Trigger, "path", out.Decision.Path, "steps", strings.Join(parts, "; "), "took", out.Duration)
}

// failure reports a stage failure to the log and the ErrorHandlers. A
// cancelled cycle (preempted, or the loop stopping) is the loop's own
// doing: the stages return its cause, which the outcome carries anyway.
func (l *Loop) failure(ctx context.Context, stage string, err error) {
	if errors.Is(ctx.Err(), context.Canceled) {
		l.log.Debug("cycle stage stopped", "stage", stage, "err", err)
		return
	}
	l.log.Warn("cycle stage failed", "stage", stage, "err", err)
	l.hooks.OnError(ctx, hooks.Failure{Stage: stage, Err: err})
}
