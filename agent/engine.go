package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The decision engine turns a perception (a text command, an event, a
// heartbeat) into a Decision. It tries the local matcher first, at zero
// LLM calls; then the five steps:
//
//  1. scenario classification and 2. intent extraction share one
//     structured call;
//  3. capability match: cosine similarity between each intent and every
//     tool's description (model embeddings cached per description, or the
//     built-in lexical embedder), filtered by scenario tags, top-K above a
//     threshold;
//  4. evaluation: weighted semantic, historical, permission and context
//     scores;
//  5. parameters: one structured call whose format is the chosen tool's
//     JSON Schema, validated strictly (one retry with the validation error).
//
// Several intents, or a best score below PlanBelow, go to the planner
// instead of step 5: one structured call whose schema only admits the
// candidate tools and their parameter schemas. Either way a decision costs
// at most two LLM calls (three with the one retry), and the prompts carry
// the top-K candidates only, so their size does not grow with the number
// of tools.

// Weights of the evaluation (step 4).
type Weights struct {
	Semantic, History, Permission, Context float64
}

// EngineConfig configures an Engine. Zero values take the defaults noted.
type EngineConfig struct {
	Device    string   // named in the system prompt
	Scenarios []string // step 1's enum (default: security, navigation, environment, interaction, maintenance, idle)
	Weights   Weights  // default 0.4/0.3/0.2/0.1
	TopK      int      // candidates per intent (default 5)
	// MinSimilarity drops candidates less similar than this (default 0.1).
	MinSimilarity float64
	// PlanBelow sends decisions whose best score is lower to the planner
	// (default 0.8).
	PlanBelow float64
	// SummaryBytes bounds the world summary when the perception has none.
	SummaryBytes int
	// CatalogueBytes bounds the tool catalogue that opens every prompt
	// (default 4096; negative: none). A scope whose skills do not fit gets
	// no catalogue: each call then lists only the candidates it offers.
	CatalogueBytes int
	// EmbedModel names the model that the LLM's Embed uses, for the
	// embedding cache; empty matches with the lexical embedder only.
	EmbedModel string
	// Caller is whose grants the engine's decisions run with (default
	// "llm"). Each step must also be allowed for the requester.
	Caller string
	// Permitted says whether a requester may have a tool needing perm run
	// for it (default: the registry's grants for that caller).
	Permitted func(requester string, grants []string, perm string) bool
	// EventMin: events below this priority are left to reflexes (default
	// High). Critical events never reach the LLM: the e-stop path acts
	// below it.
	EventMin worldmodel.Priority
	Goals    []Goal
	// GoalRefire: a goal still unmet this long after it fired fires again
	// (default 1m).
	GoalRefire time.Duration
	// Review lets the motive ask the LLM, on a heartbeat after the world
	// changed, whether anything needs doing.
	Review   bool
	Features []Feature
	Skills   []SkillDoc
	MaxSteps int // planner steps (default 6)
	// MaxTokens caps each structured answer (default 256; the planner gets
	// twice as much).
	MaxTokens int
	Log       *slog.Logger
	// Clock times goals' refires, the embedder's back-off and the traces
	// (default: the wall clock).
	Clock clock.Clock
}

// EngineTools is the tools registry as the engine uses it: the catalogue
// it ranks (specs, enabled, success history), the permission checks, the
// validation of the parameters it chose, and the calls of a plan's steps.
type EngineTools interface {
	List() []tools.Spec
	Resolve(name string) (tools.Spec, error)
	Enabled(name string) bool
	Stats() map[string]tools.History
	Permitted(caller string, extra []string, perm string) bool
	Validate(name string, params json.RawMessage) (json.RawMessage, error)
	Invoke(context.Context, tools.Call) (tools.Result, error)
}

// EngineWorld is the world model as the engine reads it: the summary in
// its prompts, the latest readings its ranking and goals look at, and the
// events and health its motive reviews.
type EngineWorld interface {
	Summary(maxBytes int) string
	Latest(source string) (worldmodel.Observation, bool)
	LatestAll() []worldmodel.Observation
	Events(sinceSeq uint64, min worldmodel.Priority, limit int) []worldmodel.Event
	Health() map[string]string
}

// Engine is the decision engine: a Decider. Safe for concurrent use.
type Engine struct {
	cfg   EngineConfig
	llm   llm.LLM
	reg   EngineTools
	world EngineWorld // may be nil: the engine then reads no world
	index *toolIndex
	log   *slog.Logger

	prompts   atomic.Pointer[prompts]
	classify  json.RawMessage // step 1+2 schema
	embedDown atomic.Int64    // unix ns until which model embeddings are not tried
	motive    motiveState
	catalogue catalogueCache
}

// RefusalError is a decision the engine would not make: no tool fits, the
// model's answers did not validate, a permission is missing. The Decision
// returned with it carries the trace.
type RefusalError struct{ Reason string }

func (e *RefusalError) Error() string { return "decision refused: " + e.Reason }

// NewEngine builds an engine over a registry and world model. model may be
// nil: the engine then answers with the local matcher and goals only. kv
// (may be nil) persists model embeddings of the tool descriptions.
func NewEngine(cfg EngineConfig, model llm.LLM, reg EngineTools, world EngineWorld, kv KV) (*Engine, error) {
	if len(cfg.Scenarios) == 0 {
		cfg.Scenarios = []string{"security", "navigation", "environment", "interaction", "maintenance", "idle"}
	}
	if cfg.Weights == (Weights{}) {
		cfg.Weights = Weights{Semantic: 0.4, History: 0.3, Permission: 0.2, Context: 0.1}
	}
	if cfg.TopK <= 0 {
		cfg.TopK = 5
	}
	cfg.Clock = clock.Or(cfg.Clock)
	if cfg.MinSimilarity <= 0 {
		cfg.MinSimilarity = 0.1
	}
	if cfg.PlanBelow <= 0 {
		cfg.PlanBelow = 0.8
	}
	if cfg.SummaryBytes <= 0 {
		cfg.SummaryBytes = 2048
	}
	if cfg.CatalogueBytes == 0 {
		cfg.CatalogueBytes = 4096
	}
	if cfg.Caller == "" {
		cfg.Caller = "llm"
	}
	if cfg.Permitted == nil {
		cfg.Permitted = reg.Permitted
	}
	if cfg.EventMin == 0 {
		cfg.EventMin = worldmodel.High
	}
	if cfg.GoalRefire <= 0 {
		cfg.GoalRefire = time.Minute
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = 6
	}
	if cfg.MaxTokens <= 0 {
		cfg.MaxTokens = 256
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	for i, g := range cfg.Goals {
		if err := g.check(); err != nil {
			return nil, fmt.Errorf("agent.goals[%d]: %w", i, err)
		}
	}
	e := &Engine{cfg: cfg, llm: model, reg: reg, world: world, index: newToolIndex(kv, cfg.EmbedModel), log: cfg.Log}
	if err := e.setFeatures(cfg.Features); err != nil {
		return nil, err
	}
	e.classify = classifySchema(cfg.Scenarios)
	if err := e.SetSkills(cfg.Skills); err != nil {
		return nil, err
	}
	e.motive.fired = map[string]time.Time{}
	return e, nil
}

// request is one thing to decide about.
type request struct {
	text      string // what the matcher and the model read
	note      string // more for the model only (why a goal fired)
	kind      string // command, event, goal, task
	requester string
	grants    []string
	scope     *Feature // nil: the main planner
	motive    string
	matcher   bool // the local matcher may answer
	trace     *Trace
}

// Decide implements Decider.
func (e *Engine) Decide(ctx context.Context, p Perception) (Decision, error) {
	switch {
	case p.Command != nil && p.Command.Tool == "":
		text := strings.TrimSpace(p.Command.Text)
		if text == "" {
			return Decision{}, ErrNoDecision
		}
		return e.decide(ctx, p, request{text: text, kind: "command from " + p.Command.Caller,
			requester: p.Command.Caller, grants: p.Command.Grants, matcher: true})
	case p.Trigger == "event" && p.Event != nil:
		ev := p.Event
		if ev.Priority < e.cfg.EventMin || ev.Priority >= worldmodel.Critical {
			return Decision{}, ErrNoDecision
		}
		return e.decide(ctx, p, request{text: describeEvent(*ev, p.Repeats), kind: "event", requester: "motive"})
	case p.Trigger == "heartbeat":
		return e.heartbeat(ctx, p)
	}
	return Decision{}, ErrNoDecision
}

// describeEvent is the perception text of an event.
func describeEvent(ev worldmodel.Event, repeats int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s event %q from %s", ev.Priority, ev.Kind, ev.Source)
	if ev.Message != "" {
		fmt.Fprintf(&b, ": %s", ev.Message)
	}
	if len(ev.Data) > 0 {
		keys := make([]string, 0, len(ev.Data))
		for k := range ev.Data {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, _ := json.Marshal(ev.Data[k])
			fmt.Fprintf(&b, " %s=%s", k, truncateText(string(v), 60))
		}
	}
	if repeats > 0 {
		fmt.Fprintf(&b, " (repeated %d times)", repeats)
	}
	return truncateText(b.String(), 400)
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

func (e *Engine) refuse(dec Decision, tr *Trace, reason string) (Decision, error) {
	tr.Refusal = reason
	dec.Steps, dec.Reason = nil, "refused: "+reason
	e.log.Info("decision refused", "perception", truncateText(tr.Perception, 120), "reason", reason)
	return dec, &RefusalError{Reason: reason}
}

// stopped ends a decision whose context ended (a preemption or the cycle
// deadline): the trace says how far it got.
func (e *Engine) stopped(ctx context.Context, dec Decision, tr *Trace) (Decision, error) {
	cause := context.Cause(ctx)
	tr.note("stopped: " + cause.Error())
	dec.Steps, dec.Reason = nil, "stopped: "+cause.Error()
	return dec, cause
}

// decide runs the local matcher and then the five steps for one request.
func (e *Engine) decide(ctx context.Context, p Perception, r request) (Decision, error) {
	tr := e.startTrace(r)
	defer e.logTrace(tr)
	dec := Decision{Path: "local", Caller: e.cfg.Caller, Trace: tr}

	// One index over every enabled skill; each scope is a view of it.
	entries := e.index.sync(e.specs(nil, true))
	scoped := e.scoped(entries, r.scope)
	tr.lap("tools")
	declined := "not a command"
	if r.matcher {
		m := e.matchLocal(r, entries, scoped)
		tr.lap("local_match")
		if len(m.steps) > 0 {
			return e.answerLocal(dec, tr, r, m)
		}
		declined = m.decline
		tr.note("local matcher declined: " + declined)
	}

	dec.Path, tr.Path = "llm", "llm"
	if e.llm == nil {
		return e.refuse(dec, tr, "no LLM is configured and the local matcher did not understand ("+declined+")")
	}
	fr := e.frame(entries, scoped, r.scope, p)
	pr := e.prompts.Load()
	intents, err := e.classifyStep(ctx, tr, r, fr, pr, declined)
	switch {
	case ctx.Err() != nil:
		return e.stopped(ctx, dec, tr)
	case errors.Is(err, ErrNoDecision):
		return Decision{}, ErrNoDecision
	case err != nil:
		return e.refuse(dec, tr, err.Error())
	}
	best, allowed, err := e.rank(ctx, tr, r, p.Event, entries, scoped, intents)
	switch {
	case ctx.Err() != nil:
		return e.stopped(ctx, dec, tr)
	case err != nil:
		return e.refuse(dec, tr, err.Error())
	}
	dec.Confidence = best.Score
	steps, err := e.chooseSteps(ctx, tr, r, fr, pr, intents, best, allowed)
	switch {
	case ctx.Err() != nil:
		return e.stopped(ctx, dec, tr)
	case err != nil:
		return e.refuse(dec, tr, err.Error())
	}
	tr.Steps = steps
	if len(steps) == 0 {
		if strings.HasPrefix(r.kind, "command") {
			return e.refuse(dec, tr, "the model planned nothing to do")
		}
		dec.Reason = "nothing to do"
		return dec, nil
	}
	dec.Steps = steps
	dec.Reason = fmt.Sprintf("scenario %s, %d step(s), best %s (%.2f)", tr.Scenario, len(steps), best.spec.Name, best.Score)
	return dec, nil
}

// startTrace begins the trace of a request (or carries on the one the
// motive review began).
func (e *Engine) startTrace(r request) *Trace {
	tr := r.trace
	if tr == nil {
		tr = newTrace(e.cfg.Clock, r.text, r.requester)
	}
	tr.Motive = r.motive
	tr.Scope = "main"
	if r.scope != nil {
		tr.Scope = r.scope.Name
	}
	return tr
}

// logTrace closes a trace and logs it at debug level.
func (e *Engine) logTrace(tr *Trace) {
	tr.finish()
	e.log.Debug("decision trace", "perception", truncateText(tr.Perception, 120), "path", tr.Path, "scope", tr.Scope,
		"scenario", tr.Scenario, "tool", tr.Tool, "steps", len(tr.Steps), "confidence", tr.Confidence,
		"llm_calls", tr.LLMCalls, "prompt_tokens", tr.PromptTokens, "eval_tokens", tr.EvalTokens,
		"refusal", tr.Refusal, "ms", tr.TotalMS)
}

// matchLocal runs the local matcher. In the main scope it sees every
// skill, the features' too: "stop" must reach drive.stop whatever mode
// owns it.
func (e *Engine) matchLocal(r request, entries, scoped []*indexed) matchOutcome {
	visible := entries
	if r.scope != nil {
		visible = scoped
	}
	specs := make([]tools.Spec, len(visible))
	for i, x := range visible {
		specs[i] = x.spec
	}
	return matchCommand(r.text, specs, e.reg.Validate)
}

// answerLocal is the decision of a matcher answer, once the requester's
// permissions allow it.
func (e *Engine) answerLocal(dec Decision, tr *Trace, r request, m matchOutcome) (Decision, error) {
	tr.Path, tr.Steps, tr.Confidence = "local", m.steps, 1
	if len(m.steps) == 1 {
		tr.Tool, tr.Params = m.steps[0].Tool, m.steps[0].Params
	}
	tr.note(m.explain)
	if err := e.permitSteps(r, m.steps); err != nil {
		return e.refuse(dec, tr, err.Error())
	}
	dec.Steps, dec.Confidence, dec.Reason = m.steps, 1, m.explain
	return dec, nil
}

// Local reports whether the local matcher answers a command on its own,
// with no LLM call: a caller that would wait for the model server to come
// up need not wait for this one.
func (e *Engine) Local(text string) bool {
	return len(e.matchLocal(request{text: strings.TrimSpace(text)}, e.index.sync(e.specs(nil, true)), nil).steps) > 0
}

// classifyStep is steps 1 and 2: the scenario and the intents, one call.
// An answer that cannot be used is not fatal: the steps go on matching the
// request itself, unfiltered (step 5 still validates everything). It
// returns ErrNoDecision for an event while the LLM is down: nobody waits
// for an answer, the reflexes have handled what they could, and the status
// says the LLM is down.
func (e *Engine) classifyStep(ctx context.Context, tr *Trace, r request, fr frame, pr *prompts, declined string) ([]Intent, error) {
	req := llm.Request{Purpose: "classify", System: pr.system, Schema: e.classify, MaxTokens: e.cfg.MaxTokens,
		Messages: []llm.Message{{Role: "user", Content: classifyPrompt(fr, r)}}}
	resp, err := e.generate(ctx, tr, req)
	tr.lap("classify")
	switch {
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case errors.Is(err, llm.ErrUnavailable) && r.kind == "event":
		return nil, ErrNoDecision
	case errors.Is(err, llm.ErrUnavailable):
		return nil, errors.New("the LLM is unavailable (" + err.Error() + ") and the local matcher did not understand (" + declined + ")")
	case err != nil && !errors.Is(err, llm.ErrTruncated):
		return nil, errors.New("classification failed: " + err.Error())
	}
	var intents []Intent
	var perr error
	tr.Scenario, intents, perr = parseClassification(resp.Content, e.cfg.Scenarios)
	if err != nil {
		perr = err
	}
	if perr != nil {
		tr.note("classification unusable (" + perr.Error() + "); matching on the request text")
		tr.Scenario, intents = "", nil
	}
	if len(intents) == 0 {
		intents = []Intent{{Text: r.text}}
	}
	tr.Intents = intents
	return intents, nil
}

// chooseSteps is step 5: the parameters of the best tool, or a plan over
// the allowed candidates when there are several intents or the best score
// is low.
func (e *Engine) chooseSteps(ctx context.Context, tr *Trace, r request, fr frame, pr *prompts, intents []Intent, best scoredTool, allowed []scoredTool) ([]Step, error) {
	if len(intents) > 1 || best.Score < e.cfg.PlanBelow {
		tr.Planned = true
		steps, err := e.plan(ctx, tr, r, fr, allowed, pr)
		tr.lap("plan")
		return steps, err
	}
	params, err := e.params(ctx, tr, r, fr, best.spec, pr)
	tr.lap("params")
	if err != nil {
		return nil, err
	}
	tr.Tool, tr.Params = best.spec.Name, params
	return []Step{{ID: "1", Tool: best.spec.Name, Params: params}}, nil
}

// Warm computes the embeddings of tool descriptions that neither memory
// nor the store has, so the first decision does not pay for them.
func (e *Engine) Warm(ctx context.Context) error {
	if e.cfg.EmbedModel == "" || e.llm == nil {
		return nil
	}
	_, err := e.index.embedMissing(ctx, e.llm, e.index.sync(e.specs(nil, true)))
	return err
}

// scoped are the entries the planner of scope sees.
func (e *Engine) scoped(entries []*indexed, scope *Feature) []*indexed {
	out := make([]*indexed, 0, len(entries))
	for _, x := range entries {
		if e.inScope(scope, x.spec.Name) {
			out = append(out, x)
		}
	}
	return out
}

// frame opens every prompt of a decision: the scope's catalogue and the
// world summary (the perception's, else the world model's now).
func (e *Engine) frame(entries, scoped []*indexed, scope *Feature, p Perception) frame {
	world := p.Summary
	if world == "" && e.world != nil {
		world = e.world.Summary(e.cfg.SummaryBytes)
	}
	name := ""
	if scope != nil {
		name = scope.Name
	}
	cat := e.catalogue.get(entries, name, func() string { return catalogue(e.usable(scoped), e.cfg.CatalogueBytes) })
	return newFrame(cat, world, p.Context)
}

// usable are the entries the engine's own caller may run. The others
// (admin: config.reload, estop.reset, plugins.unload …) stay candidates —
// scored 0 for permission, so a refusal can name them — but the catalogue
// does not list them: they would cost every prompt their length and offer
// the model what a plan may not use.
func (e *Engine) usable(entries []*indexed) []*indexed {
	out := make([]*indexed, 0, len(entries))
	for _, x := range entries {
		if e.reg.Permitted(e.cfg.Caller, nil, x.spec.Permission) {
			out = append(out, x)
		}
	}
	return out
}

// generate makes one LLM call and records it.
func (e *Engine) generate(ctx context.Context, tr *Trace, req llm.Request) (llm.Response, error) {
	start := e.cfg.Clock.Now()
	resp, err := e.llm.Generate(ctx, req)
	tr.call(req, resp, e.cfg.Clock.Since(start), err)
	return resp, err
}

// specs are the enabled skills in a scope (every scope when all is set),
// sorted by name. Internal tools are left out: the engine does not feed
// tool results back to the model, and the world summary already tells it
// what world.query would.
func (e *Engine) specs(scope *Feature, all bool) []tools.Spec {
	list := e.reg.List()
	out := list[:0]
	for _, s := range list {
		if s.Internal || !e.reg.Enabled(s.Name) || !all && !e.inScope(scope, s.Name) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// permitted: may the requester have perm used for it, and may the engine's
// caller use it?
func (e *Engine) permitted(r request, perm string) bool {
	return e.cfg.Permitted(r.requester, r.grants, perm) && e.reg.Permitted(e.cfg.Caller, nil, perm)
}

func (e *Engine) permitSteps(r request, steps []Step) error {
	for _, s := range steps {
		spec, err := e.reg.Resolve(s.Tool)
		if err != nil {
			return err
		}
		if !e.cfg.Permitted(r.requester, r.grants, spec.Permission) {
			return fmt.Errorf("%s needs permission %q, which %s does not have", spec.Name, spec.Permission, r.requester)
		}
		if !e.reg.Permitted(e.cfg.Caller, nil, spec.Permission) {
			return fmt.Errorf("%s needs permission %q, which the %s caller is not granted", spec.Name, spec.Permission, e.cfg.Caller)
		}
	}
	return nil
}
