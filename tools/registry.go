package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Filters are the pre/post filters around every call; *hooks.Manager
// implements them with the plugins' before_act/after_act hooks.
type Filters interface {
	BeforeAct(ctx context.Context, a *hooks.Action) error
	AfterAct(ctx context.Context, r hooks.ActionResult)
}

// Options configure a Registry.
type Options struct {
	Store   Store               // history and disabled tools survive restarts; nil: they live as long as the registry
	Filters Filters             // nil: no hooks
	Grants  map[string][]string // caller -> granted permissions ("*" = all)
	Log     *slog.Logger
	// Journal, when set, gets a "tool_call" record of every call (caller,
	// parameters, outcome, duration): the one stream MQTT, the dashboard and
	// the recorder read.
	Journal *worldmodel.Model
	// FlushDelay batches history writes so a call does not pay an fsync
	// (default 2s); Close flushes what is pending.
	FlushDelay time.Duration
	// Clock times the calls (default: the wall clock).
	Clock clock.Clock
}

// Call is one invocation request.
type Call struct {
	Caller string          // cli, mqtt, llm, reflex, motive, agent …
	Grants []string        // extra grants for this call only (e.g. an MQTT admin user)
	Tool   string          // qualified or unambiguous unqualified name
	Params json.RawMessage // JSON object; empty means {}
	Cycle  uint64          // agent cycle, when called from the loop
	Via    *Via            // a fleet or group command's mark; nil for a direct call
	// StepGroup numbers the group of the cycle's plan steps this call ran
	// in at once with others (0: it ran alone, or not from the loop), so a
	// replay compares their calls in any order.
	StepGroup int
}

// External callers see skills only; internal tools are the agent's own.
var externalCallers = map[string]bool{"mqtt": true, "web": true}

var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

const (
	bucketHistory  = "tool_history"
	bucketDisabled = "tool_disabled"
)

type entry struct {
	tool   Tool
	spec   Spec
	schema *schema
	owner  string
}

// Registry holds the tools of one agent. It is safe for concurrent use.
type Registry struct {
	store   Store
	filters Filters
	grants  map[string][]string
	log     *slog.Logger
	delay   time.Duration
	journal *worldmodel.Model
	clock   clock.Clock

	mu       sync.RWMutex
	tools    map[string]*entry
	disabled map[string]bool
	absent   map[string]string // tool -> why it is not there (its plugin did not start)

	// smu guards schemas, the compiled parameter schemas by their text.
	// Tools often share one (every tool without parameters has the empty
	// object's), and compiling is most of what registering costs (the
	// library checks each schema against its meta-schema): a node
	// registers some 30 tools before it is ready.
	smu     sync.Mutex
	schemas map[string]*schema

	hmu     sync.Mutex
	history map[string]*History
	dirty   map[string]bool
	flush   clock.Timer
	closed  bool
	// wmu is held while a batch is written, so that Close cannot return
	// (and the caller close the store) under a timer's write in flight.
	wmu sync.Mutex
}

// History is what the registry remembers of a tool's calls.
type History struct {
	Calls     uint64        `json:"calls"`
	Successes uint64        `json:"successes"`
	Failures  uint64        `json:"failures"`
	Cancelled uint64        `json:"cancelled"` // preempted or timed out: not the tool's fault
	Latency   time.Duration `json:"latency_total_ns"`
	LastError string        `json:"last_error,omitempty"`
	LastUsed  time.Time     `json:"last_used"`
}

// SuccessRate is the Laplace-smoothed share of successful calls, so an
// unused tool scores 0.5 rather than 0 or 1.
func (h History) SuccessRate() float64 {
	return (float64(h.Successes) + 1) / (float64(h.Successes+h.Failures) + 2)
}

// MeanLatency is the average duration of completed calls.
func (h History) MeanLatency() time.Duration {
	if n := h.Successes + h.Failures; n > 0 {
		return h.Latency / time.Duration(n)
	}
	return 0
}

// NewRegistry builds a registry, loading history and disabled tools from the
// store when one is given.
func NewRegistry(o Options) (*Registry, error) {
	r := &Registry{
		store: o.Store, filters: o.Filters, grants: o.Grants, log: o.Log, delay: o.FlushDelay, journal: o.Journal, clock: clock.Or(o.Clock),
		tools: map[string]*entry{}, disabled: map[string]bool{}, schemas: map[string]*schema{},
		history: map[string]*History{}, dirty: map[string]bool{},
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.delay <= 0 {
		r.delay = 2 * time.Second
	}
	if r.store == nil {
		r.store = unsaved{}
	}
	err := r.store.ForEach(bucketHistory, func(k string, v json.RawMessage) error {
		var h History
		if err := json.Unmarshal(v, &h); err != nil {
			return fmt.Errorf("tool history %s: %w", k, err)
		}
		r.history[k] = &h
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = r.store.ForEach(bucketDisabled, func(k string, _ json.RawMessage) error {
		r.disabled[k] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Register adds a tool owned by a plugin (owner is used by UnregisterOwner).
func (r *Registry) Register(owner string, t Tool) error {
	spec := t.Spec()
	if !namePattern.MatchString(spec.Name) {
		return fmt.Errorf("tool name %q: want lower-case \"plugin.func\"", spec.Name)
	}
	if strings.TrimSpace(spec.Description) == "" {
		return fmt.Errorf("tool %s: a description is required (the LLM matches on it)", spec.Name)
	}
	if spec.Permission == "" {
		spec.Permission = "read"
	}
	sch, err := r.schemaOf(spec.Name, spec.Params)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(spec.Params)) == 0 {
		spec.Params = emptyObjectSchema
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old, dup := r.tools[spec.Name]; dup {
		return fmt.Errorf("tool %s already registered by %s", spec.Name, old.owner)
	}
	r.tools[spec.Name] = &entry{tool: t, spec: spec, schema: sch, owner: owner}
	delete(r.absent, spec.Name)
	return nil
}

// schemaOf compiles a tool's parameter schema, or returns the one
// compiled for the same text: a compiled schema is never changed, and its
// errors name what failed in the parameters, not the tool.
func (r *Registry) schemaOf(name string, raw json.RawMessage) (*schema, error) {
	key := string(bytes.TrimSpace(raw))
	r.smu.Lock()
	defer r.smu.Unlock()
	if s, ok := r.schemas[key]; ok {
		return s, nil
	}
	s, err := compileSchema(name, raw)
	if err != nil {
		return nil, err
	}
	r.schemas[key] = s
	return s, nil
}

// Unregister removes one tool.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.tools[name]
	delete(r.tools, name)
	return ok
}

// UnregisterOwner removes every tool a plugin registered and returns their names.
func (r *Registry) UnregisterOwner(owner string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var names []string
	for n, e := range r.tools {
		if e.owner == owner {
			names = append(names, n)
			delete(r.tools, n)
		}
	}
	sort.Strings(names)
	return names
}

// Resolve finds a tool by qualified name, or by the part after the dot when
// exactly one tool has it.
func (r *Registry) Resolve(name string) (Spec, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, err := r.resolveLocked(name)
	if err != nil {
		return Spec{}, err
	}
	return e.spec, nil
}

func (r *Registry) resolveLocked(name string) (*entry, error) {
	if e, ok := r.tools[name]; ok {
		return e, nil
	}
	var found []*entry
	if !strings.Contains(name, ".") {
		for n, e := range r.tools {
			if strings.HasSuffix(n, "."+name) {
				found = append(found, e)
			}
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		if why, ok := r.absent[name]; ok {
			return nil, &Error{Code: CodeNotFound, Tool: name, Msg: "not available: " + why}
		}
		return nil, &Error{Code: CodeNotFound, Tool: name, Msg: "no such tool"}
	}
	names := make([]string, len(found))
	for i, e := range found {
		names[i] = e.spec.Name
	}
	sort.Strings(names)
	return nil, &Error{Code: CodeAmbiguous, Tool: name, Msg: "ambiguous: could be " + strings.Join(names, ", ")}
}

// List returns the specs of all tools (skills and internal), sorted by name.
func (r *Registry) List() []Spec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Spec, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.spec)
	}
	slices.SortFunc(out, func(a, b Spec) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// MarkAbsent records why a tool is not registered (its plugin declined to
// load): calls of it are answered with the reason. Registering the tool
// later (plugins.load) forgets it.
func (r *Registry) MarkAbsent(tool, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[tool]; ok {
		return
	}
	if r.absent == nil {
		r.absent = map[string]string{}
	}
	r.absent[tool] = why
}

// Absent says why a tool marked absent is not there.
func (r *Registry) Absent(tool string) (why string, ok bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	why, ok = r.absent[tool]
	return why, ok
}

// Enabled reports whether a tool may be called.
func (r *Registry) Enabled(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return !r.disabled[name]
}

// SetEnabled enables or disables a tool; the choice is remembered in the store.
func (r *Registry) SetEnabled(name string, on bool) error {
	spec, err := r.Resolve(name)
	if err != nil {
		return err
	}
	name = spec.Name // Invoke looks up the qualified name
	r.mu.Lock()
	if on {
		delete(r.disabled, name)
	} else {
		r.disabled[name] = true
	}
	r.mu.Unlock()
	if on {
		return r.store.Delete(bucketDisabled, name)
	}
	return r.store.Put(bucketDisabled, name, true)
}

// Permitted reports whether the caller (with extra grants) may call a tool
// requiring perm.
func (r *Registry) Permitted(caller string, extra []string, perm string) bool {
	for _, g := range [][]string{r.grants[caller], extra} {
		if slices.Contains(g, "*") || slices.Contains(g, perm) {
			return true
		}
	}
	return false
}

// Validate checks params for a tool as Invoke would (defaults filled) without
// calling it; the decision engine uses it before committing to a plan.
func (r *Registry) Validate(name string, params json.RawMessage) (json.RawMessage, error) {
	r.mu.RLock()
	e, err := r.resolveLocked(name)
	r.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	out, err := e.schema.check(params)
	if err != nil {
		err.(*Error).Tool = e.spec.Name
	}
	return out, err
}

// Invoke runs one call through resolution, permission, validation, the
// before_act hooks, the tool, history and the after_act hooks.
func (r *Registry) Invoke(ctx context.Context, c Call) (Result, error) {
	r.mu.RLock()
	e, err := r.resolveLocked(c.Tool)
	disabled := err == nil && r.disabled[e.spec.Name]
	r.mu.RUnlock()
	if err != nil {
		return Result{}, err
	}
	spec := e.spec
	if disabled {
		return Result{}, &Error{Code: CodeDisabled, Tool: spec.Name, Msg: "tool is disabled"}
	}
	if spec.Internal && externalCallers[c.Caller] {
		return Result{}, &Error{Code: CodeNotFound, Tool: spec.Name, Msg: "internal tool, not offered to " + c.Caller}
	}
	if !r.Permitted(c.Caller, c.Grants, spec.Permission) {
		return Result{}, &Error{Code: CodeForbidden, Tool: spec.Name,
			Msg: fmt.Sprintf("caller %q is not granted permission %q", c.Caller, spec.Permission)}
	}
	params, err := e.schema.check(c.Params)
	if err != nil {
		err.(*Error).Tool = spec.Name
		return Result{}, err
	}
	action := hooks.Action{Cycle: c.Cycle, Caller: c.Caller, Tool: spec.Name, Params: params}
	if r.filters != nil {
		if err := r.filters.BeforeAct(ctx, &action); err != nil {
			return Result{}, &Error{Code: CodeRefused, Tool: spec.Name, Msg: "refused: " + err.Error(), Err: err}
		}
		if !bytes.Equal(action.Params, params) {
			// A hook rewrote the parameters: they must pass the schema again.
			if params, err = e.schema.check(action.Params); err != nil {
				err.(*Error).Tool = spec.Name
				return Result{}, err
			}
		}
	}
	start := r.clock.Now()
	tctx := context.WithValue(ctx, callerKey{}, c.Caller)
	if c.Via != nil {
		tctx = context.WithValue(tctx, viaKey{}, c.Via)
	}
	res, err := safeInvoke(tctx, e.tool, params)
	took := r.clock.Since(start)
	if err != nil {
		code := CodeFailed
		// A preempted cycle cancels with a cause, and tools (the Ollama
		// client, sub-planners) return that cause rather than ctx.Err().
		var coded *Error
		switch {
		case ctx.Err() != nil && (errors.Is(err, ctx.Err()) || errors.Is(err, context.Cause(ctx))):
			code = CodeCancelled
		case errors.As(err, &coded) && coded.Code != "":
			// A tool that says why it did not act (refused: e-stop latched,
			// rate limit …) keeps its code: callers branch on it.
			code = coded.Code
		case errors.Is(err, ErrRefused):
			code = CodeRefused
		}
		err = &Error{Code: code, Tool: spec.Name, Msg: err.Error(), Err: err}
	}
	r.record(spec.Name, took, err)
	if r.journal != nil {
		r.journal.Note(callRecord(c, spec.Name, params, res, err, took))
	}
	if r.filters != nil {
		ar := hooks.ActionResult{Action: action, Err: err, Duration: took}
		ar.Action.Params = params
		if err == nil {
			ar.Result, _ = json.Marshal(res)
		}
		r.filters.AfterAct(ctx, ar)
	}
	return res, err
}

func safeInvoke(ctx context.Context, t Tool, params json.RawMessage) (res Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("tool panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return t.Invoke(ctx, params)
}

func (r *Registry) record(name string, took time.Duration, err error) {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	h := r.history[name]
	if h == nil {
		h = &History{}
		r.history[name] = h
	}
	h.Calls++
	h.LastUsed = r.clock.Now()
	switch {
	case err == nil:
		h.Successes++
		h.Latency += took
	case CodeOf(err) == CodeCancelled:
		h.Cancelled++
	default:
		h.Failures++
		h.Latency += took
		h.LastError = err.Error()
	}
	if r.closed {
		return
	}
	r.dirty[name] = true
	if r.flush == nil {
		// Batching disk writes is the disk's business, on the wall clock
		// whatever clock the calls run on: a replay's virtual clock must
		// not see a timer armed by every first call.
		r.flush = clock.Real().AfterFunc(r.delay, func() {
			if err := r.Flush(); err != nil {
				r.log.Warn("tool history not saved", "err", err)
			}
		})
	}
}

// Stats returns the history of every tool that has one.
func (r *Registry) Stats() map[string]History {
	r.hmu.Lock()
	defer r.hmu.Unlock()
	out := make(map[string]History, len(r.history))
	for k, h := range r.history {
		out[k] = *h
	}
	return out
}

// Flush writes pending history to the store in one transaction.
func (r *Registry) Flush() error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	r.hmu.Lock()
	r.flush = nil
	batch := make(map[string]any, len(r.dirty))
	for name := range r.dirty {
		batch[name] = *r.history[name]
	}
	clear(r.dirty)
	r.hmu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	return r.store.PutMany(bucketHistory, batch)
}

// Close stops background flushing and saves pending history. The store
// itself belongs to the caller.
func (r *Registry) Close() error {
	r.hmu.Lock()
	r.closed = true
	if r.flush != nil {
		r.flush.Stop()
	}
	r.hmu.Unlock()
	return r.Flush()
}
