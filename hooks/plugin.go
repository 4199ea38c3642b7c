package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Info describes a plugin to the Manager. The Manager reads it once, when the
// plugin is added, so it must not change afterwards.
type Info struct {
	Name        string // unique among loaded plugins
	Version     string
	Description string

	// Priority orders plugins that no dependency or soft constraint orders:
	// higher runs earlier. Among equal priorities the name decides, so the
	// order never depends on the order in which plugins were added.
	Priority int

	// DependsOn names plugins that must already be loaded (or be added in the
	// same AddAll batch); this plugin runs after them and they cannot be
	// removed while it is loaded.
	DependsOn []string

	// RunAfter and RunBefore are soft: they order this plugin relative to
	// the named ones only while those are loaded, and never make loading fail
	// except when they close a cycle.
	RunAfter  []string
	RunBefore []string
}

// Plugin is the only method every plugin has. Everything else is opt-in: a
// plugin implements just the hook interfaces it needs (Starter, BeforeActer,
// ...), and the Manager finds them by type assertion once, when it is added.
type Plugin interface{ Info() Info }

// Lifecycle hooks.
type (
	// Starter is called by Manager.Start in execution order; an error aborts
	// the start.
	Starter interface {
		OnAgentStart(ctx context.Context) error
	}
	// Stopper is called by Manager.Stop in reverse execution order, so a
	// plugin is stopped before the plugins it depends on.
	Stopper interface {
		OnAgentStop(ctx context.Context) error
	}
)

// Stage hooks. "Chain" hooks run one after another in execution order on the
// same pointer, each seeing what the previous one left; "parallel" hooks get a
// copy and run concurrently, because they only observe (log, notify, learn)
// and one slow observer must not delay the others. The copy is shallow: the
// slices in it (Steps, Results, Params, Notes) are shared by all observers at
// once and must be treated as read-only.
type (
	BeforeSenser interface { // chain; errors are reported, the chain continues
		BeforeSense(ctx context.Context, s *Sense) error
	}
	AfterSenser interface { // parallel
		AfterSense(ctx context.Context, s Sense) error
	}
	BeforePlanner interface { // chain; errors are reported, the chain continues
		BeforePlan(ctx context.Context, p *Plan) error
	}
	AfterPlanner interface { // parallel
		AfterPlan(ctx context.Context, d Decision) error
	}
	// BeforeActer is where permission and safety checks live: it is a chain
	// that STOPS at the first error, which Manager.BeforeAct returns so the
	// action is not performed.
	BeforeActer interface {
		BeforeAct(ctx context.Context, a *Action) error
	}
	AfterActer interface { // parallel
		AfterAct(ctx context.Context, r ActionResult) error
	}
	BeforeReflecter interface { // chain; errors are reported, the chain continues
		BeforeReflect(ctx context.Context, r *Reflection) error
	}
	AfterReflecter interface { // parallel
		AfterReflect(ctx context.Context, r Reflection) error
	}
	// ErrorHandler receives every hook failure the Manager does not return to
	// its caller, and whatever the agent reports through Manager.OnError.
	// It runs in parallel; its own failures are only logged, never fed back
	// to OnError, so a broken handler cannot loop.
	ErrorHandler interface {
		OnError(ctx context.Context, f Failure) error
	}
)

// Hook names, as used in Failure.Stage and in log records. They are the
// names of the reference design's HOOK_CONFIGS table.
const (
	HookAgentStart    = "on_agent_start"
	HookAgentStop     = "on_agent_stop"
	HookBeforeSense   = "before_sense"
	HookAfterSense    = "after_sense"
	HookBeforePlan    = "before_plan"
	HookAfterPlan     = "after_plan"
	HookBeforeAct     = "before_act"
	HookAfterAct      = "after_act"
	HookBeforeReflect = "before_reflect"
	HookAfterReflect  = "after_reflect"
	HookOnError       = "on_error"
)

// Sense is what the agent perceived at the start of a cycle.
type Sense struct {
	Cycle   uint64
	Trigger string // what woke the cycle: "heartbeat" or the interrupt's source/kind
	Summary string // world-model summary; BeforeSense plugins may filter or enrich it
	// Speak: the cycle runs a command that asks for a spoken reply.
	Speak bool
}

// Plan is the input to the decision step.
type Plan struct {
	Cycle      uint64
	Perception string
	// Context is text plugins add to the decision prompt. It is bounded by
	// Budget because every byte ends up in a local LLM's context window on a
	// small board; Manager.BeforePlan trims whatever exceeds it.
	Context []Contribution
	// Budget is the most bytes of Context text; 0 means DefaultContextBudget.
	Budget int
}

// Contribution is one plugin's addition to Plan.Context.
type Contribution struct{ Plugin, Text string }

// DefaultContextBudget bounds Plan.Context when Plan.Budget is zero.
const DefaultContextBudget = 1024

func (p *Plan) budget() int {
	if p.Budget > 0 {
		return p.Budget
	}
	return DefaultContextBudget
}

// ContextLen is the number of bytes of text in p.Context.
func (p *Plan) ContextLen() int {
	n := 0
	for _, c := range p.Context {
		n += len(c.Text)
	}
	return n
}

// Contribute appends text to p.Context on behalf of plugin, cut (at a UTF-8
// boundary) to what is left of the budget. It reports whether all of text fit,
// so a plugin can tell that its contribution was shortened.
func (p *Plan) Contribute(plugin, text string) bool {
	left := p.budget() - p.ContextLen()
	whole := len(text) <= left
	text = truncate(text, left)
	if text != "" {
		p.Context = append(p.Context, Contribution{Plugin: plugin, Text: text})
	}
	return whole
}

// trim enforces the budget on contributions appended directly to p.Context,
// keeping earlier ones (earlier plugins run first, so they win) and reporting
// which plugins lost text.
func (p *Plan) trim() (cut []string) {
	left := p.budget()
	for i := range p.Context {
		c := &p.Context[i]
		if len(c.Text) > left {
			cut = append(cut, c.Plugin)
			c.Text = truncate(c.Text, left)
		}
		left -= len(c.Text)
	}
	if cut != nil {
		kept := p.Context[:0]
		for _, c := range p.Context {
			if c.Text != "" {
				kept = append(kept, c)
			}
		}
		p.Context = kept
	}
	return cut
}

// truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func truncate(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Decision is the outcome of the plan stage.
type Decision struct {
	Cycle uint64
	Path  string // which decision path chose it: "explicit", "reflex", "matcher", "llm", ...
	Steps []Action
	Err   error
}

// Action is one tool call about to be made.
type Action struct {
	Cycle  uint64
	Caller string // who asked: "mqtt", "llm", "reflex", ...; permission checks key on it
	Tool   string
	Params json.RawMessage
}

// ActionResult is the outcome of one Action.
type ActionResult struct {
	Action   Action
	Result   json.RawMessage
	Err      error
	Duration time.Duration
}

// Reflection is the end-of-cycle review.
type Reflection struct {
	Cycle     uint64
	Results   []ActionResult
	Preempted bool // the cycle was cancelled by a higher-priority event
	Err       error
	Notes     []string // BeforeReflect plugins may add notes for the reflect step
}

// Failure is a hook (or agent stage) failure. It is what ErrorHandlers
// receive, and it is also an error: Manager.BeforeAct and Manager.Start return
// one so the caller can tell which plugin refused (errors.As).
type Failure struct {
	Stage  string // a Hook* name, or an agent stage name for failures the agent reports
	Plugin string // empty when the failure is not a plugin's
	Err    error
}

func (f Failure) Error() string {
	if f.Plugin == "" {
		return fmt.Sprintf("%s: %v", f.Stage, f.Err)
	}
	return fmt.Sprintf("plugin %q: %s: %v", f.Plugin, f.Stage, f.Err)
}

func (f Failure) Unwrap() error { return f.Err }

// ErrStop ends a chain early, successfully: the plugins after the one that
// returned it are not called and the stage proceeds. In BeforeAct that means
// the later checks are skipped, so a plugin should only return it when it has
// taken over the decision completely (order safety plugins before it).
var ErrStop = errors.New("hooks: stop chain")

// ErrNotFound is returned for a plugin name that is not loaded.
var ErrNotFound = errors.New("hooks: plugin not loaded")

// declined is the error a plugin constructor returns to opt out.
type declined struct {
	reason string
	tools  []string // what it would have provided
}

func (d *declined) Error() string { return "plugin declined: " + d.reason }

// Decline is returned by a plugin constructor that chooses not to load, for
// example because its device is absent or a required setting is empty. It is
// not a failure: the loader logs the reason and carries on without the plugin,
// so one board config can list optional hardware.
func Decline(reason string) error { return &declined{reason: reason} }

// DeclineTools is Decline from a plugin that provides tools when it loads:
// a call of one of them is then answered with the reason (a program that
// is not installed) rather than "no such tool", and `check` says why a
// reflex naming one will not run.
func DeclineTools(reason string, tools ...string) error {
	return &declined{reason: reason, tools: tools}
}

// DeclinedTools are the tools a declined plugin would have provided.
func DeclinedTools(err error) []string {
	var d *declined
	if errors.As(err, &d) {
		return d.tools
	}
	return nil
}

// IsDeclined reports whether err (or an error it wraps) came from Decline,
// and with what reason.
func IsDeclined(err error) (reason string, ok bool) {
	var d *declined
	if errors.As(err, &d) {
		return d.reason, true
	}
	return "", false
}
