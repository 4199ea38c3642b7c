package hooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/internal/wait"
)

var errBoom = errors.New("boom")

// chainStage drives one chain hook generically: install makes a plugin whose
// hook appends its name to the stage's data (and returns ret), run calls the
// stage and returns the accumulated data.
type chainStage struct {
	name        string
	stopOnError bool
	install     func(p *plug, ret func() error)
	run         func(ctx context.Context, m *Manager) (string, error)
}

var chainStages = []chainStage{
	{
		name: HookBeforeSense,
		install: func(p *plug, ret func() error) {
			p.beforeSense = func(_ context.Context, s *Sense) error { s.Summary += "+" + p.info.Name; return ret() }
		},
		run: func(ctx context.Context, m *Manager) (string, error) {
			s := Sense{Summary: "in"}
			err := m.BeforeSense(ctx, &s)
			return s.Summary, err
		},
	},
	{
		name: HookBeforePlan,
		install: func(p *plug, ret func() error) {
			p.beforePlan = func(_ context.Context, pl *Plan) error {
				pl.Perception += "+" + p.info.Name
				pl.Contribute(p.info.Name, p.info.Name)
				return ret()
			}
		},
		run: func(ctx context.Context, m *Manager) (string, error) {
			p := Plan{Perception: "in"}
			err := m.BeforePlan(ctx, &p)
			var who []string
			for _, c := range p.Context {
				who = append(who, c.Plugin)
			}
			if want := strings.Split(strings.TrimPrefix(p.Perception, "in+"), "+"); p.Perception != "in" && !slices.Equal(who, want) {
				return "", fmt.Errorf("contributions %v do not match perception %q", who, p.Perception)
			}
			return p.Perception, err
		},
	},
	{
		name:        HookBeforeAct,
		stopOnError: true,
		install: func(p *plug, ret func() error) {
			p.beforeAct = func(_ context.Context, a *Action) error {
				a.Params = append(a.Params, "+"+p.info.Name...)
				return ret()
			}
		},
		run: func(ctx context.Context, m *Manager) (string, error) {
			a := Action{Params: []byte("in")}
			err := m.BeforeAct(ctx, &a)
			return string(a.Params), err
		},
	},
	{
		name: HookBeforeReflect,
		install: func(p *plug, ret func() error) {
			p.beforeReflect = func(_ context.Context, r *Reflection) error {
				r.Notes = append(r.Notes, p.info.Name)
				return ret()
			}
		},
		run: func(ctx context.Context, m *Manager) (string, error) {
			r := Reflection{Notes: []string{"in"}}
			err := m.BeforeReflect(ctx, &r)
			return strings.Join(r.Notes, "+"), err
		},
	},
}

func TestChain(t *testing.T) {
	stopErr := fmt.Errorf("handled: %w", ErrStop)
	tests := []struct {
		name string
		ret  map[string]error // what each plugin's hook returns
		// want*: the data after the stage, the error, and the OnError
		// failures, for continuing chains and for BeforeAct.
		want, wantStop       string
		wantErr, wantStopErr error
		failed, failedStop   []string
	}{
		{
			name: "order and data flow",
			want: "in+mid+a+z", wantStop: "in+mid+a+z",
		},
		{
			name: "ErrStop ends the chain successfully",
			ret:  map[string]error{"a": stopErr},
			want: "in+mid+a", wantStop: "in+mid+a",
		},
		{
			name: "error",
			ret:  map[string]error{"mid": errBoom},
			want: "in+mid+a+z", failed: []string{"mid"},
			wantStop: "in+mid", wantStopErr: errBoom,
		},
		{
			name: "two errors",
			ret:  map[string]error{"a": errBoom, "z": errBoom},
			want: "in+mid+a+z", failed: []string{"a", "z"},
			wantStop: "in+mid+a", wantStopErr: errBoom,
		},
	}
	for _, st := range chainStages {
		for _, tt := range tests {
			t.Run(st.name+"/"+tt.name, func(t *testing.T) {
				var fs failures
				var ps []Plugin
				for _, in := range []Info{{Name: "z"}, {Name: "a"}, {Name: "mid", Priority: 1}} {
					p := &plug{info: in}
					ret := tt.ret[in.Name]
					st.install(p, func() error { return ret })
					ps = append(ps, p)
				}
				ps = append(ps, &plug{info: Info{Name: "handler"}, onError: fs.handler})
				m := newManager(t, ps...)

				got, err := st.run(context.Background(), m)
				want, wantErr, wantFailed := tt.want, tt.wantErr, tt.failed
				if st.stopOnError {
					want, wantErr, wantFailed = tt.wantStop, tt.wantStopErr, tt.failedStop
				}
				if got != want {
					t.Errorf("data: got %q, want %q", got, want)
				}
				if !errors.Is(err, wantErr) || (err == nil) != (wantErr == nil) {
					t.Errorf("err: got %v, want %v", err, wantErr)
				}
				if wantErr != nil {
					var f Failure
					if !errors.As(err, &f) || f.Plugin != strings.Split(got, "+")[len(strings.Split(got, "+"))-1] || f.Stage != st.name {
						t.Errorf("err %v does not name the refusing plugin and stage", err)
					}
				}
				var gotFailed []string
				for _, f := range fs.All() {
					if f.Stage != st.name || !errors.Is(f.Err, errBoom) {
						t.Errorf("unexpected failure %v", f)
					}
					gotFailed = append(gotFailed, f.Plugin)
				}
				slices.Sort(gotFailed)
				if !slices.Equal(gotFailed, wantFailed) {
					t.Errorf("OnError got %v, want %v", gotFailed, wantFailed)
				}
			})
		}
	}
}

// A preempted cycle stops between plugins and says so.
func TestChainContextEnded(t *testing.T) {
	for _, st := range chainStages {
		t.Run(st.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var fs failures
			a := &plug{info: Info{Name: "a"}}
			st.install(a, func() error { cancel(); return context.Canceled })
			b := &plug{info: Info{Name: "b"}}
			st.install(b, func() error { t.Error("b ran after ctx ended"); return nil })
			m := newManager(t, a, b, &plug{info: Info{Name: "h"}, onError: fs.handler})

			_, err := st.run(ctx, m)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			if !st.stopOnError && len(fs.All()) != 0 {
				t.Errorf("cancellation reported as plugin failure: %v", fs.All())
			}
			// Already cancelled: nothing runs.
			if _, err := st.run(ctx, m); !errors.Is(err, context.Canceled) {
				t.Fatalf("second run: got %v", err)
			}
		})
	}
}

func TestBeforePlanBudget(t *testing.T) {
	long := strings.Repeat("x", 30)
	greedy := &plug{info: Info{Name: "greedy", Priority: 1}, beforePlan: func(_ context.Context, p *Plan) error {
		p.Context = append(p.Context, Contribution{"greedy", long}) // bypasses Contribute
		return nil
	}}
	polite := &plug{info: Info{Name: "polite"}, beforePlan: func(_ context.Context, p *Plan) error {
		if p.Contribute("polite", "héllo") {
			t.Error("Contribute reported that everything fit")
		}
		return nil
	}}
	var logs bytes.Buffer
	m := NewManager(slog.New(slog.NewTextHandler(&logs, nil)))
	if err := m.AddAll(greedy, polite); err != nil {
		t.Fatal(err)
	}
	p := Plan{Budget: 32}
	if err := m.BeforePlan(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	// 30 bytes of greedy leave 2 for polite: "h" plus half of "é" must not be cut apart.
	want := []Contribution{{"greedy", long}, {"polite", "h"}}
	if !slices.Equal(p.Context, want) {
		t.Fatalf("got %q, want %q", p.Context, want)
	}
	if p.ContextLen() > p.Budget {
		t.Fatalf("ContextLen %d over budget %d", p.ContextLen(), p.Budget)
	}

	p = Plan{Budget: 10}
	if err := m.BeforePlan(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	if want := []Contribution{{"greedy", long[:10]}}; !slices.Equal(p.Context, want) {
		t.Fatalf("got %q, want %q", p.Context, want)
	}
	if !strings.Contains(logs.String(), "plugins=[greedy]") {
		t.Errorf("trim not logged with the plugin's name:\n%s", logs.String())
	}

	var q Plan
	if !q.Contribute("x", strings.Repeat("y", DefaultContextBudget)) || q.Contribute("x", "z") {
		t.Error("zero Budget does not mean DefaultContextBudget")
	}
}

// parallelStage drives one parallel hook generically.
type parallelStage struct {
	name    string
	install func(p *plug, fn func(ctx context.Context) error)
	run     func(ctx context.Context, m *Manager)
}

var parallelStages = []parallelStage{
	{
		name: HookAfterSense,
		install: func(p *plug, fn func(context.Context) error) {
			p.afterSense = func(ctx context.Context, _ Sense) error { return fn(ctx) }
		},
		run: func(ctx context.Context, m *Manager) { m.AfterSense(ctx, Sense{}) },
	},
	{
		name: HookAfterPlan,
		install: func(p *plug, fn func(context.Context) error) {
			p.afterPlan = func(ctx context.Context, _ Decision) error { return fn(ctx) }
		},
		run: func(ctx context.Context, m *Manager) { m.AfterPlan(ctx, Decision{}) },
	},
	{
		name: HookAfterAct,
		install: func(p *plug, fn func(context.Context) error) {
			p.afterAct = func(ctx context.Context, _ ActionResult) error { return fn(ctx) }
		},
		run: func(ctx context.Context, m *Manager) { m.AfterAct(ctx, ActionResult{}) },
	},
	{
		name: HookAfterReflect,
		install: func(p *plug, fn func(context.Context) error) {
			p.afterReflect = func(ctx context.Context, _ Reflection) error { return fn(ctx) }
		},
		run: func(ctx context.Context, m *Manager) { m.AfterReflect(ctx, Reflection{}) },
	},
}

// All hooks of a parallel stage run at the same time: each waits until all
// have started, which would deadlock if they ran one after another. Errors
// and panics are collected and reach OnError; the stage never fails.
func TestParallel(t *testing.T) {
	for _, st := range parallelStages {
		for _, cancellable := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/cancellable=%v", st.name, cancellable), func(t *testing.T) {
				const n = 4
				var arrived wait.Group
				arrived.Add(n)
				var ps []Plugin
				for i := range n {
					p := &plug{info: Info{Name: fmt.Sprint("p", i)}}
					st.install(p, func(context.Context) error {
						arrived.Done()
						waitTimeout(t, &arrived)
						switch i {
						case 1:
							return errBoom
						case 2:
							panic("kaboom")
						}
						return nil
					})
					ps = append(ps, p)
				}
				var fs failures
				ps = append(ps, &plug{info: Info{Name: "h"}, onError: fs.handler})
				m := newManager(t, ps...)
				ctx := context.Background()
				if cancellable {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer cancel()
				}
				st.run(ctx, m)

				got := fs.All()
				slices.SortFunc(got, func(a, b Failure) int { return strings.Compare(a.Plugin, b.Plugin) })
				if len(got) != 2 || got[0].Plugin != "p1" || !errors.Is(got[0].Err, errBoom) ||
					got[1].Plugin != "p2" || !strings.Contains(got[1].Err.Error(), "panic: kaboom") {
					t.Fatalf("OnError got %v", got)
				}
				for _, f := range got {
					if f.Stage != st.name {
						t.Errorf("stage %q, want %q", f.Stage, st.name)
					}
				}
			})
		}
	}
}

// A single hook with a context that can never end runs on the caller's
// goroutine (there is nothing to bound), with the same error handling.
func TestParallelSingleInline(t *testing.T) {
	var fs failures
	var stack string
	m := newManager(t,
		&afterActOnly{info: Info{Name: "a"}, fn: func() error { stack = string(debug.Stack()); return errBoom }},
		&onlyErrors{info: Info{Name: "h"}, fn: fs.handler},
	)
	m.AfterAct(context.Background(), ActionResult{})
	if !strings.Contains(stack, "TestParallelSingleInline") {
		t.Errorf("hook did not run on the caller's goroutine:\n%s", stack)
	}
	if got := fs.All(); len(got) != 1 || got[0].Plugin != "a" || got[0].Stage != HookAfterAct {
		t.Fatalf("OnError got %v", got)
	}
}

type afterActOnly struct {
	info Info
	fn   func() error
}

func (p *afterActOnly) Info() Info                                   { return p.info }
func (p *afterActOnly) AfterAct(context.Context, ActionResult) error { return p.fn() }

// OnError handler failures are logged, never fed back into OnError.
func TestOnErrorDoesNotRecurse(t *testing.T) {
	var calls atomic.Int32
	var logs syncbuf.Buffer
	m := NewManager(slog.New(slog.NewTextHandler(&logs, nil)))
	err := m.AddAll(
		&onlyErrors{info: Info{Name: "bad"}, fn: func(context.Context, Failure) error { calls.Add(1); return errBoom }},
		&onlyErrors{info: Info{Name: "worse"}, fn: func(context.Context, Failure) error { calls.Add(1); panic("handler panic") }},
	)
	if err != nil {
		t.Fatal(err)
	}
	m.OnError(context.Background(), Failure{Stage: "act", Err: errors.New("tool failed")})
	if got := calls.Load(); got != 2 {
		t.Fatalf("handlers called %d times, want 2", got)
	}
	out := logs.String()
	if !strings.Contains(out, "plugin=bad") || !strings.Contains(out, "hook panicked") || !strings.Contains(out, "plugin=worse") {
		t.Fatalf("handler failures not logged:\n%s", out)
	}
}

// Parallel stages wait no longer than ctx; Stop waits for what is left.
func TestParallelBoundedByContext(t *testing.T) {
	release := make(chan struct{})
	var fs failures
	m := newManager(t,
		&plug{info: Info{Name: "slow"}, afterAct: func(context.Context, ActionResult) error { <-release; return errBoom }},
		&plug{info: Info{Name: "fast"}},
		&onlyErrors{info: Info{Name: "h"}, fn: fs.handler},
	)
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	returned := make(chan struct{})
	go func() { m.AfterAct(ctx, ActionResult{}); close(returned) }()
	select {
	case <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("AfterAct did not return when its context ended")
	}

	short, cancel2 := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel2()
	if err := m.Stop(short); err == nil || !strings.Contains(err.Error(), "1 hook calls still running") {
		t.Fatalf("Stop with a hook still running: got %v", err)
	}
	close(release)
	if err := m.Stop(context.Background()); err != nil {
		t.Fatalf("Stop after release: %v", err)
	}
	// The late failure was still reported.
	if got := fs.All(); len(got) != 1 || got[0].Plugin != "slow" {
		t.Fatalf("OnError got %v", got)
	}
}

// After-hooks run even when the cycle's context has already ended: they
// record what did happen.
func TestParallelRunsAfterPreemption(t *testing.T) {
	ran := make(chan string, 2)
	m := newManager(t,
		&plug{info: Info{Name: "a"}, afterAct: func(context.Context, ActionResult) error { ran <- "a"; return nil }},
		&plug{info: Info{Name: "b"}, afterAct: func(context.Context, ActionResult) error { ran <- "b"; return nil }},
	)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m.AfterAct(ctx, ActionResult{})
	if err := m.Stop(context.Background()); err != nil { // waits for them
		t.Fatal(err)
	}
	if len(ran) != 2 {
		t.Fatalf("%d after-hooks ran, want 2", len(ran))
	}
}

func TestPanicInChain(t *testing.T) {
	var logs syncbuf.Buffer
	var fs failures
	m := NewManager(slog.New(slog.NewTextHandler(&logs, nil)))
	var ranAfter atomic.Bool
	err := m.AddAll(
		&plug{info: Info{Name: "crash", Priority: 1},
			beforeSense: func(context.Context, *Sense) error { panic("sense bug") },
			beforeAct:   func(context.Context, *Action) error { var a []int; _ = a[3]; return nil },
		},
		&plug{info: Info{Name: "next"},
			beforeSense: func(context.Context, *Sense) error { ranAfter.Store(true); return nil },
			beforeAct:   func(context.Context, *Action) error { t.Error("BeforeAct continued after a panic"); return nil },
		},
		&onlyErrors{info: Info{Name: "h"}, fn: fs.handler},
	)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.BeforeSense(context.Background(), &Sense{}); err != nil {
		t.Fatalf("BeforeSense: %v", err)
	}
	if !ranAfter.Load() {
		t.Error("BeforeSense chain stopped at a panic")
	}
	if got := fs.All(); len(got) != 1 || got[0].Plugin != "crash" || !strings.Contains(got[0].Err.Error(), "panic: sense bug") {
		t.Errorf("OnError got %v", got)
	}

	err = m.BeforeAct(context.Background(), &Action{})
	if err == nil || !strings.Contains(err.Error(), `plugin "crash": before_act: panic: runtime error: index out of range`) {
		t.Fatalf("BeforeAct: got %v", err)
	}
	if !strings.Contains(logs.String(), "hook panicked") || !strings.Contains(logs.String(), "exec_test.go") {
		t.Errorf("panic not logged with its stack:\n%s", logs.String())
	}
}

// A panic carrying ErrStop is a crash, not a request to stop the chain.
func TestPanicWithErrStopIsAFailure(t *testing.T) {
	m := newManager(t, &plug{info: Info{Name: "p"}, beforeAct: func(context.Context, *Action) error { panic(ErrStop) }})
	if err := m.BeforeAct(context.Background(), &Action{}); err == nil {
		t.Fatal("panic(ErrStop) approved the action")
	}
}

// Each plugin is called only for the hooks it implements.
func TestOnlyImplementedHooks(t *testing.T) {
	m := newManager(t, &onlyErrors{info: Info{Name: "e"}}, &plug{info: Info{Name: "all"}})
	s := m.snap.Load()
	counts := []int{len(s.beforeSense), len(s.afterSense), len(s.beforePlan), len(s.afterPlan),
		len(s.beforeAct), len(s.afterAct), len(s.beforeReflect), len(s.afterReflect)}
	for i, c := range counts {
		if c != 1 {
			t.Errorf("hook %d has %d plugins, want 1", i, c)
		}
	}
	if len(s.onError) != 2 {
		t.Errorf("onError has %d plugins, want 2", len(s.onError))
	}
}

// Add and Remove while every kind of stage runs. Run with -race.
func TestAddRemoveWhileRunning(t *testing.T) {
	var guardCalls atomic.Int64
	guard := &plug{info: Info{Name: "guard", Priority: 100},
		beforeAct: func(context.Context, *Action) error { guardCalls.Add(1); return nil },
	}
	m := newManager(t, guard)
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var readers, writers sync.WaitGroup
	for range 4 {
		readers.Go(func() {
			for ctx.Err() == nil {
				a := Action{Tool: "x"}
				if err := m.BeforeAct(ctx, &a); err != nil && ctx.Err() == nil {
					t.Errorf("BeforeAct: %v", err)
					return
				}
				_ = m.BeforeSense(ctx, &Sense{})
				m.AfterAct(ctx, ActionResult{})
				m.OnError(ctx, Failure{Stage: "test", Err: errBoom})
				_ = m.Plugins()
			}
		})
	}
	for w := range 3 {
		writers.Go(func() {
			for i := range 200 {
				name := fmt.Sprintf("w%d-%d", w, i)
				p := &plug{info: Info{Name: name, DependsOn: []string{"guard"}, RunAfter: []string{fmt.Sprintf("w%d-%d", (w+1)%3, i)}},
					start:       func(context.Context) error { return nil },
					beforeSense: func(_ context.Context, s *Sense) error { s.Summary += "."; return nil },
					afterAct:    func(context.Context, ActionResult) error { return errBoom },
				}
				var err error
				if i%2 == 0 {
					err = m.Add(p)
				} else {
					err = m.Load(ctx, p)
				}
				if err != nil {
					// Three writers' plugins can close a soft cycle; refusing it is right.
					if !strings.Contains(err.Error(), "ordering cycle") {
						t.Errorf("Add: %v", err)
					}
					continue
				}
				if i%2 == 0 {
					err = m.Remove(name)
				} else {
					err = m.Unload(ctx, name)
				}
				if err != nil {
					t.Errorf("Remove: %v", err)
				}
			}
		})
	}
	writers.Wait()
	cancel()
	readers.Wait()
	if err := m.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(m.Plugins()); !slices.Equal(got, []string{"guard"}) {
		t.Fatalf("left: %v", got)
	}
	if guardCalls.Load() == 0 {
		t.Fatal("BeforeAct never reached the guard")
	}
}

func TestDecline(t *testing.T) {
	tests := []struct {
		err    error
		reason string
		ok     bool
	}{
		{Decline("no camera on /dev/video0"), "no camera on /dev/video0", true},
		{fmt.Errorf("camera: %w", Decline("absent")), "absent", true},
		{errBoom, "", false},
		{nil, "", false},
	}
	for _, tt := range tests {
		reason, ok := IsDeclined(tt.err)
		if reason != tt.reason || ok != tt.ok {
			t.Errorf("IsDeclined(%v) = %q, %v; want %q, %v", tt.err, reason, ok, tt.reason, tt.ok)
		}
	}
}

// onlyErrors implements nothing but ErrorHandler.
type onlyErrors struct {
	info Info
	fn   func(context.Context, Failure) error
}

func (o *onlyErrors) Info() Info { return o.info }
func (o *onlyErrors) OnError(ctx context.Context, f Failure) error {
	if o.fn == nil {
		return nil
	}
	return o.fn(ctx, f)
}

// waitTimeout is where a hook of a parallel stage waits until every hook
// of g has arrived, which happens (within 10 s) only if they run at the
// same time.
func waitTimeout(t *testing.T, g *wait.Group) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if g.Wait(ctx) != nil {
		t.Error("parallel hooks did not run concurrently")
	}
}
