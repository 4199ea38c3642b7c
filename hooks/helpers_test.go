package hooks

import (
	"context"
	"log/slog"
	"testing"

	"github.com/edgeagent/edgeagent/internal/syncbuf"
)

// plug implements every hook; a nil func makes that hook a no-op. Tests that
// need a plugin with only some hooks use their own types.
type plug struct {
	info Info

	start, stop   func(context.Context) error
	beforeSense   func(context.Context, *Sense) error
	afterSense    func(context.Context, Sense) error
	beforePlan    func(context.Context, *Plan) error
	afterPlan     func(context.Context, Decision) error
	beforeAct     func(context.Context, *Action) error
	afterAct      func(context.Context, ActionResult) error
	beforeReflect func(context.Context, *Reflection) error
	afterReflect  func(context.Context, Reflection) error
	onError       func(context.Context, Failure) error
}

func (p *plug) Info() Info { return p.info }

func call0(f func(context.Context) error, ctx context.Context) error {
	if f == nil {
		return nil
	}
	return f(ctx)
}

func call1[T any](f func(context.Context, T) error, ctx context.Context, v T) error {
	if f == nil {
		return nil
	}
	return f(ctx, v)
}

func (p *plug) OnAgentStart(ctx context.Context) error { return call0(p.start, ctx) }
func (p *plug) OnAgentStop(ctx context.Context) error  { return call0(p.stop, ctx) }
func (p *plug) BeforeSense(ctx context.Context, s *Sense) error {
	return call1(p.beforeSense, ctx, s)
}
func (p *plug) AfterSense(ctx context.Context, s Sense) error { return call1(p.afterSense, ctx, s) }
func (p *plug) BeforePlan(ctx context.Context, pl *Plan) error {
	return call1(p.beforePlan, ctx, pl)
}
func (p *plug) AfterPlan(ctx context.Context, d Decision) error { return call1(p.afterPlan, ctx, d) }
func (p *plug) BeforeAct(ctx context.Context, a *Action) error  { return call1(p.beforeAct, ctx, a) }
func (p *plug) AfterAct(ctx context.Context, r ActionResult) error {
	return call1(p.afterAct, ctx, r)
}
func (p *plug) BeforeReflect(ctx context.Context, r *Reflection) error {
	return call1(p.beforeReflect, ctx, r)
}
func (p *plug) AfterReflect(ctx context.Context, r Reflection) error {
	return call1(p.afterReflect, ctx, r)
}
func (p *plug) OnError(ctx context.Context, f Failure) error { return call1(p.onError, ctx, f) }

// recorder is a concurrency-safe list of events.
type recorder = syncbuf.Slice[string]

// failures collects what ErrorHandlers receive.
type failures struct{ syncbuf.Slice[Failure] }

func (f *failures) handler(_ context.Context, fl Failure) error {
	f.Append(fl)
	return nil
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func newManager(t testing.TB, ps ...Plugin) *Manager {
	t.Helper()
	m := NewManager(quiet())
	if err := m.AddAll(ps...); err != nil {
		t.Fatalf("AddAll: %v", err)
	}
	return m
}

func names(ps []Plugin) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Info().Name
	}
	return out
}
