package hooks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// The stage methods below follow the reference design's HOOK_CONFIGS table:
//
//	hook            mode      stop_on_error
//	before_sense    chain     no
//	before_plan     chain     no
//	before_act      chain     yes   (permission and safety checks)
//	before_reflect  chain     no
//	after_sense     parallel  no
//	after_plan      parallel  no
//	after_act       parallel  no
//	after_reflect   parallel  no
//	on_error        parallel  no

// BeforeSense runs the BeforeSense chain on s. Plugin errors are logged and
// reported to the ErrorHandlers, and the chain goes on: a broken enricher
// must not blind the robot. It returns an error only when ctx ends before the
// chain is done (the cycle was preempted): ctx's error.
func (m *Manager) BeforeSense(ctx context.Context, s *Sense) error {
	snap := m.snap.Load()
	return chain(m, snap, ctx, HookBeforeSense, snap.beforeSense, BeforeSenser.BeforeSense, s, false)
}

// AfterSense runs the AfterSense hooks concurrently on a copy of s and waits
// for them, or for ctx to end. Failures are logged and reported, never
// returned.
func (m *Manager) AfterSense(ctx context.Context, s Sense) {
	snap := m.snap.Load()
	parallel(m, snap, ctx, HookAfterSense, snap.afterSense, AfterSenser.AfterSense, s)
}

// BeforePlan runs the BeforePlan chain on p, like BeforeSense, and then cuts
// p.Context to its budget, logging the plugins whose text was cut.
func (m *Manager) BeforePlan(ctx context.Context, p *Plan) error {
	snap := m.snap.Load()
	err := chain(m, snap, ctx, HookBeforePlan, snap.beforePlan, BeforePlanner.BeforePlan, p, false)
	if cut := p.trim(); cut != nil {
		m.log.Warn("plan context over budget; trimmed", "budget", p.budget(), "plugins", cut)
	}
	return err
}

// AfterPlan runs the AfterPlan hooks concurrently; see AfterSense.
func (m *Manager) AfterPlan(ctx context.Context, d Decision) {
	snap := m.snap.Load()
	parallel(m, snap, ctx, HookAfterPlan, snap.afterPlan, AfterPlanner.AfterPlan, d)
}

// BeforeAct runs the BeforeAct chain on a and stops at the first error, which
// it returns as a Failure naming the plugin: the caller must then not perform
// the action. Refusals are the normal outcome of a permission check, so they
// are not logged above debug level nor sent to the ErrorHandlers; the caller
// decides how to report them. If ctx ends first, ctx's error is returned, so
// a preempted cycle never acts on a half-checked action.
func (m *Manager) BeforeAct(ctx context.Context, a *Action) error {
	snap := m.snap.Load()
	return chain(m, snap, ctx, HookBeforeAct, snap.beforeAct, BeforeActer.BeforeAct, a, true)
}

// AfterAct runs the AfterAct hooks concurrently; see AfterSense.
func (m *Manager) AfterAct(ctx context.Context, r ActionResult) {
	snap := m.snap.Load()
	parallel(m, snap, ctx, HookAfterAct, snap.afterAct, AfterActer.AfterAct, r)
}

// BeforeReflect runs the BeforeReflect chain on r; see BeforeSense.
func (m *Manager) BeforeReflect(ctx context.Context, r *Reflection) error {
	snap := m.snap.Load()
	return chain(m, snap, ctx, HookBeforeReflect, snap.beforeReflect, BeforeReflecter.BeforeReflect, r, false)
}

// AfterReflect runs the AfterReflect hooks concurrently; see AfterSense.
func (m *Manager) AfterReflect(ctx context.Context, r Reflection) {
	snap := m.snap.Load()
	parallel(m, snap, ctx, HookAfterReflect, snap.afterReflect, AfterReflecter.AfterReflect, r)
}

// OnError hands f to the ErrorHandlers concurrently and waits for them (or
// ctx). The agent calls it for its own failures; the Manager calls it for
// hook failures. Handler failures are only logged.
func (m *Manager) OnError(ctx context.Context, f Failure) {
	snap := m.snap.Load()
	parallel(m, snap, ctx, HookOnError, snap.onError, ErrorHandler.OnError, f)
}

// chain calls each hook in order on the same v. ErrStop ends it successfully;
// with stopOnError the first other error ends it and is returned, otherwise
// errors are collected and reported once the chain is done, so the handlers'
// time is not spent between two plugins of the chain.
func chain[H, T any](m *Manager, s *snapshot, ctx context.Context, stage string,
	hs []hook[H], call func(H, context.Context, *T) error, v *T, stopOnError bool) error {
	var fails []Failure
	defer func() {
		for _, f := range fails {
			m.failed(s, ctx, f)
		}
	}()
	for i := range hs {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := callChain(call, hs[i].h, ctx, v)
		if err == nil {
			continue
		}
		if errors.Is(err, ErrStop) {
			return nil
		}
		f := Failure{Stage: stage, Plugin: hs[i].plugin, Err: err}
		if stopOnError {
			m.logPanic(f.Plugin, stage, err)
			m.log.Debug("hook chain stopped", "hook", stage, "plugin", f.Plugin, "err", err)
			return f
		}
		if cerr := ctx.Err(); cerr != nil {
			// Preempted: the plugin most likely failed because ctx ended,
			// which is not its fault and not worth an OnError.
			return cerr
		}
		fails = append(fails, f)
	}
	return nil
}

// parallel runs every hook in its own goroutine and waits until all are done
// or ctx ends. The hooks are started even if ctx has already ended, because
// after-hooks record what did happen (an action performed by a cycle that
// was then preempted still needs its audit). Whatever is still running when
// ctx ends is left to finish in the background, where its failure is still
// logged and reported, and Stop waits for it.
func parallel[H, T any](m *Manager, s *snapshot, ctx context.Context, stage string,
	hs []hook[H], call func(H, context.Context, T) error, v T) {
	switch {
	case len(hs) == 0:
		return
	case len(hs) == 1 && ctx.Done() == nil:
		// ctx can never end, so waiting for one goroutine would be the
		// same as calling the hook here, minus the goroutine.
		if err := callValue(call, hs[0].h, ctx, v); err != nil {
			m.failed(s, ctx, Failure{Stage: stage, Plugin: hs[0].plugin, Err: err})
		}
		return
	}
	endedBefore := ctx.Err() != nil
	finished := make(chan int, len(hs)) // buffered: abandoned hooks never block
	m.bg.Add(len(hs))
	for i := range hs {
		go func() {
			defer m.bg.Done()
			if err := callValue(call, hs[i].h, ctx, v); err != nil {
				m.failed(s, ctx, Failure{Stage: stage, Plugin: hs[i].plugin, Err: err})
			}
			finished <- i
		}()
	}
	done := make([]bool, len(hs))
	for range hs {
		select {
		case i := <-finished:
			done[i] = true
			continue
		case <-ctx.Done():
		}
		var running []string
		for i, ok := range done {
			if !ok {
				running = append(running, hs[i].plugin)
			}
		}
		// Expected when the cycle was already preempted; worth a warning
		// when a hook outlived the stage it was called from.
		level := slog.LevelWarn
		if endedBefore {
			level = slog.LevelDebug
		}
		m.log.Log(ctx, level, "hooks still running when the context ended; not waiting",
			"hook", stage, "plugins", running, "err", ctx.Err())
		return
	}
}

// failed logs a hook failure and, unless it is an ErrorHandler's own, hands
// it to the ErrorHandlers of the snapshot the stage ran with.
func (m *Manager) failed(s *snapshot, ctx context.Context, f Failure) {
	if !m.logPanic(f.Plugin, f.Stage, f.Err) {
		m.log.Warn("hook failed", "hook", f.Stage, "plugin", f.Plugin, "err", f.Err)
	}
	if f.Stage != HookOnError {
		parallel(m, s, ctx, HookOnError, s.onError, ErrorHandler.OnError, f)
	}
}

// logPanic logs err with its stack if it is a recovered panic, and reports
// whether it was.
func (m *Manager) logPanic(plugin, stage string, err error) bool {
	var p *panicError
	if !errors.As(err, &p) {
		return false
	}
	m.log.Error("hook panicked", "hook", stage, "plugin", plugin, "panic", p.value, "stack", string(p.stack))
	return true
}

// callChain and callValue call one hook with a panic guard. They are separate
// functions, not closures, so the guard is an open-coded defer and the call
// does not allocate.
func callChain[H, T any](call func(H, context.Context, *T) error, h H, ctx context.Context, v *T) (err error) {
	defer recoverInto(&err)
	return call(h, ctx, v)
}

func callValue[H, T any](call func(H, context.Context, T) error, h H, ctx context.Context, v T) (err error) {
	defer recoverInto(&err)
	return call(h, ctx, v)
}

// panicError is a panic recovered from a hook. It deliberately does not
// unwrap to the panic value: a plugin that panics with ErrStop has crashed,
// it has not asked to stop the chain.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("panic: %v", e.value) }

// recoverInto must be deferred directly so that recover sees the panic.
func recoverInto(err *error) {
	if r := recover(); r != nil {
		*err = &panicError{value: r, stack: debug.Stack()}
	}
}
