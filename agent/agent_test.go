package agent

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var quiet = slog.New(slog.DiscardHandler)

type rig struct {
	loop   *Loop
	world  *worldmodel.Model
	reg    *tools.Registry
	cancel context.CancelFunc
	done   chan error
	// blocked receives when slow.wait has started; released is closed by
	// the test to let it go (or the cycle's context ends it).
	started chan struct{}
	calls   syncbuf.Slice[string] // the tools run, in order
}

func newRig(t *testing.T, cfg Config, reflexes []Reflex) *rig {
	t.Helper()
	r := &rig{world: worldmodel.New(worldmodel.Config{}), started: make(chan struct{}, 16)}
	reg, err := tools.NewRegistry(tools.Options{Grants: map[string][]string{"cli": {"*"}, "reflex": {"actuate"}}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	r.reg = reg
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(reg.Register("slow", tools.Func(tools.Spec{Name: "slow.wait", Description: "blocks until cancelled", Permission: "actuate"},
		func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			r.calls.Append("slow.wait")
			r.started <- struct{}{}
			<-ctx.Done()
			return tools.Result{}, context.Cause(ctx)
		})))
	for _, name := range []string{"light.on", "light.off", "log.note"} {
		must(reg.Register("x", tools.Func(tools.Spec{Name: name, Description: name, Permission: "actuate"},
			func(context.Context, json.RawMessage) (tools.Result, error) {
				r.calls.Append(name)
				return tools.Result{Value: name}, nil
			})))
	}
	must(reg.Register("x", tools.Func(tools.Spec{Name: "fail.now", Description: "fails", Permission: "actuate"},
		func(context.Context, json.RawMessage) (tools.Result, error) {
			r.calls.Append("fail.now")
			return tools.Result{}, errors.New("broken")
		})))
	r.loop = New(cfg, r.world, reg, hooks.NewManager(quiet), quiet)
	must(reg.Register("agent", r.loop.StatusTool()))
	r.loop.SetDecider(Chain{Explicit{}, NewReflexes(reflexes)})
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- r.loop.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-r.done:
		case <-time.After(2 * time.Second):
			t.Error("loop did not stop within 2s")
		}
	})
	return r
}

func TestExplicitCommand(t *testing.T) {
	r := newRig(t, Config{Heartbeat: time.Hour}, nil)
	out, err := r.loop.Submit(context.Background(), Command{ID: "c1", Caller: "cli", Tool: "light.on"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Decision.Path != "explicit" || len(out.Steps) != 1 || !out.Steps[0].OK() || out.Steps[0].Result.Value != "light.on" {
		t.Fatalf("%+v", out)
	}
	// A text command has no engine in the core: a clear error, nothing run.
	_, err = r.loop.Submit(context.Background(), Command{ID: "c2", Caller: "cli", Text: "light the way"})
	if err == nil || !strings.Contains(err.Error(), "no decision engine") {
		t.Fatalf("text without engine: %v", err)
	}
	// A refused call is reported in the step, not as a crash.
	out, _ = r.loop.Submit(context.Background(), Command{ID: "c3", Caller: "nobody", Tool: "light.on"})
	if out.Steps[0].Code != tools.CodeForbidden {
		t.Fatalf("%+v", out.Steps)
	}
}

func TestHighEventPreemptsNormalCycle(t *testing.T) {
	r := newRig(t, Config{Heartbeat: time.Hour}, []Reflex{{On: "front_cam/motion_start", Tool: "light.on"}})
	res := make(chan Outcome, 1)
	go func() {
		out, _ := r.loop.Submit(context.Background(), Command{ID: "slow", Caller: "cli", Tool: "slow.wait"})
		res <- out
	}()
	<-r.started // the Normal cycle is inside its slow step
	r.loop.Interrupt(worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High})
	var out Outcome
	select {
	case out = <-res:
	case <-time.After(2 * time.Second):
		t.Fatal("slow cycle was not cancelled")
	}
	if out.Preempted != "front_cam/motion_start" || !strings.Contains(out.Steps[0].Error, "preempted by high front_cam/motion_start") ||
		out.Steps[0].Code != tools.CodeCancelled {
		t.Fatalf("outcome %+v", out)
	}
	// The High event's cycle runs next and fires its reflex.
	deadline := time.Now().Add(2 * time.Second)
	for !contains(r.calls.All(), "light.on") {
		if time.Now().After(deadline) {
			t.Fatalf("motion cycle did not run: %v", r.calls.All())
		}
		time.Sleep(time.Millisecond)
	}
	evs := r.world.Events(0, worldmodel.Low, 0)
	if !hasEvent(evs, "preempted", "cycle 1 (normal command slow slow.wait) preempted by high front_cam/motion_start") {
		t.Fatalf("preemption not recorded: %+v", evs)
	}
	if st := r.loop.Status(); st.Preemptions != 1 {
		t.Fatalf("status %+v", st)
	}
}

// blockingDecider stands in for an LLM decision: it waits for its context.
type blockingDecider struct{ started chan struct{} }

func (d blockingDecider) Decide(ctx context.Context, p Perception) (Decision, error) {
	if p.Command == nil {
		return Decision{}, ErrNoDecision
	}
	d.started <- struct{}{}
	<-ctx.Done()
	return Decision{Path: "llm"}, context.Cause(ctx)
}

type errorCounter struct {
	mu     sync.Mutex
	stages []string
}

func (*errorCounter) Info() hooks.Info { return hooks.Info{Name: "errors"} }
func (c *errorCounter) OnError(_ context.Context, f hooks.Failure) error {
	c.mu.Lock()
	c.stages = append(c.stages, f.Stage)
	c.mu.Unlock()
	return nil
}

func TestPreemptedDecisionIsNotAFailure(t *testing.T) {
	counter := &errorCounter{}
	submit := func(timeout time.Duration, preempt bool) error {
		hk := hooks.NewManager(quiet)
		if err := hk.Add(counter); err != nil {
			t.Fatal(err)
		}
		reg, _ := tools.NewRegistry(tools.Options{Log: quiet})
		loop := New(Config{Heartbeat: time.Hour, CycleTimeout: timeout}, worldmodel.New(worldmodel.Config{}), reg, hk, quiet)
		started := make(chan struct{}, 1)
		loop.SetDecider(blockingDecider{started})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- loop.Run(ctx) }()
		defer func() {
			cancel()
			<-done
			_ = hk.Stop(context.Background()) // waits for on_error calls left running
		}()
		res := make(chan error, 1)
		go func() {
			_, err := loop.Submit(context.Background(), Command{ID: "t", Caller: "cli", Text: "think hard"})
			res <- err
		}()
		<-started
		if preempt {
			loop.Interrupt(worldmodel.Event{Kind: "motion_start", Source: "cam", Priority: worldmodel.High})
		}
		return <-res
	}
	var pe *PreemptedError
	if err := submit(time.Minute, true); !errors.As(err, &pe) {
		t.Fatalf("want a preemption, got %v", err)
	}
	// The deadline still counts: a decision that outlives its cycle is a failure.
	if err := submit(10*time.Millisecond, false); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the deadline, got %v", err)
	}
	counter.mu.Lock()
	defer counter.mu.Unlock()
	if strings.Join(counter.stages, ",") != "plan" {
		t.Fatalf("on_error saw %v, want only the timed-out plan", counter.stages)
	}
}

func TestEqualPriorityDoesNotPreempt(t *testing.T) {
	r := newRig(t, Config{Heartbeat: time.Hour, CycleTimeout: 200 * time.Millisecond}, nil)
	res := make(chan Outcome, 1)
	go func() {
		out, _ := r.loop.Submit(context.Background(), Command{ID: "slow", Caller: "cli", Tool: "slow.wait"})
		res <- out
	}()
	<-r.started
	r.loop.Interrupt(worldmodel.Event{Kind: "note", Source: "x", Priority: worldmodel.Normal})
	out := <-res // ends by the cycle deadline, not by preemption
	if out.Preempted != "" || !strings.Contains(out.Steps[0].Error, "deadline") {
		t.Fatalf("%+v", out)
	}
}

func TestReflexCooldownAndSources(t *testing.T) {
	r := newRig(t, Config{Heartbeat: time.Hour}, []Reflex{
		{On: "motion_start", Tool: "light.on", Cooldown: time.Hour},
		{On: "door/opened", Tool: "log.note"},
	})
	d := r.loop.decider.Load().(deciderBox).d
	ev := &worldmodel.Event{Kind: "motion_start", Source: "pir"}
	dec, err := d.Decide(context.Background(), Perception{Event: ev})
	if err != nil || len(dec.Steps) != 1 || dec.Steps[0].Tool != "light.on" || dec.Caller != "reflex" {
		t.Fatalf("%+v %v", dec, err)
	}
	if _, err := d.Decide(context.Background(), Perception{Event: ev}); !errors.Is(err, ErrNoDecision) {
		t.Fatalf("cooldown ignored: %v", err)
	}
	if _, err := d.Decide(context.Background(), Perception{Event: &worldmodel.Event{Kind: "opened", Source: "window"}}); !errors.Is(err, ErrNoDecision) {
		t.Fatal("source filter ignored")
	}
}

func TestPlanDAG(t *testing.T) {
	for _, tc := range []struct {
		steps []Step
		want  string
	}{
		{[]Step{{ID: "a", DependsOn: []string{"b"}}, {ID: "b", DependsOn: []string{"a"}}}, "cycle: a -> b -> a"},
		{[]Step{{ID: "a", DependsOn: []string{"zz"}}}, "unknown step"},
		{[]Step{{ID: "a"}, {ID: "a"}}, "twice"},
		{[]Step{{ID: ""}}, "no id"},
	} {
		if err := CheckPlan(tc.steps); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.steps, err, tc.want)
		}
	}
	r := newRig(t, Config{Heartbeat: time.Hour}, nil)
	dec := Decision{Caller: "cli", Steps: []Step{
		{ID: "1", Tool: "fail.now"},
		{ID: "2", Tool: "light.on", DependsOn: []string{"1"}},
		{ID: "3", Tool: "log.note", DependsOn: []string{"2"}},
		{ID: "4", Tool: "light.off"},
	}}
	res := runSteps(context.Background(), clock.Real(), r.reg, dec, 1)
	if res[0].Code != tools.CodeFailed || !res[1].Skipped || !res[2].Skipped || !res[3].OK() {
		t.Fatalf("%+v", res)
	}
	if c := r.calls.All(); contains(c, "light.on") || contains(c, "log.note") {
		t.Fatalf("dependents ran: %v", c)
	}
}

func TestBusCoalescesAndCountsDrops(t *testing.T) {
	b := NewBus(3, nil)
	for i := 0; i < 5; i++ {
		b.Push(&Interrupt{Event: worldmodel.Event{Kind: "motion_update", Source: "cam", Priority: worldmodel.Normal}})
	}
	if s := b.Stats(); s.Queued != 1 || s.Coalesced != 4 {
		t.Fatalf("%+v", s)
	}
	b.Push(&Interrupt{Event: worldmodel.Event{Kind: "a", Source: "s", Priority: worldmodel.Low}})
	b.Push(&Interrupt{Event: worldmodel.Event{Kind: "b", Source: "s", Priority: worldmodel.Low}})
	// Full: a Critical pushes out the oldest Low; another Low is dropped.
	if !b.Push(&Interrupt{Event: worldmodel.Event{Kind: "estop", Source: "btn", Priority: worldmodel.Critical}}) {
		t.Fatal("critical refused")
	}
	if b.Push(&Interrupt{Event: worldmodel.Event{Kind: "c", Source: "s", Priority: worldmodel.Low}}) {
		t.Fatal("low accepted into a full queue of higher or equal priority")
	}
	if s := b.Stats(); s.Dropped != 2 || s.Queued != 3 {
		t.Fatalf("%+v", s)
	}
	var order []string
	for it, ok := b.Pop(); ok; it, ok = b.Pop() {
		order = append(order, it.Event.Kind)
	}
	if strings.Join(order, ",") != "estop,motion_update,b" {
		t.Fatalf("order %v", order)
	}
	// A dropped command's waiter is told so.
	b2 := NewBus(1, nil)
	b2.Push(&Interrupt{Event: worldmodel.Event{Kind: "x", Priority: worldmodel.High}})
	it := &Interrupt{Event: worldmodel.Event{Kind: "command", Priority: worldmodel.Normal}, Command: &Command{ID: "1"}, reply: make(chan Outcome, 1)}
	b2.Push(it)
	if out := <-it.reply; !errors.Is(out.Err, ErrDropped) {
		t.Fatalf("%v", out.Err)
	}
}

func TestHeartbeatAndStatus(t *testing.T) {
	r := newRig(t, Config{Heartbeat: 5 * time.Millisecond}, nil)
	r.loop.Report("sensors", func() any { return map[string]string{"env": "ok"} })
	deadline := time.Now().Add(2 * time.Second)
	for r.loop.Status().Cycles < 3 {
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat cycles")
		}
		time.Sleep(time.Millisecond)
	}
	res, err := r.reg.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "agent.status"})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(res.Value)
	if !strings.Contains(string(js), `"components":{"sensors":{"env":"ok"}}`) || !strings.Contains(string(js), `"queue":{"queued"`) {
		t.Fatalf("%s", js)
	}
}

func TestSubmitAfterStop(t *testing.T) {
	r := newRig(t, Config{Heartbeat: time.Hour}, nil)
	r.cancel()
	<-r.done
	r.done <- nil // for the cleanup
	if _, err := r.loop.Submit(context.Background(), Command{Tool: "light.on", Caller: "cli"}); !errors.Is(err, ErrStopped) {
		t.Fatalf("%v", err)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func hasEvent(evs []worldmodel.Event, kind, msg string) bool {
	for _, e := range evs {
		if e.Kind == kind && e.Message == msg {
			return true
		}
	}
	return false
}

// Steps that may run at once share a group, through a shared step too;
// steps that wait for every step before them are alone (0). The cycle's
// tool_call records carry the group, for a replay to compare them in any
// order.
func TestStepGroups(t *testing.T) {
	for _, tc := range []struct {
		deps [][]string // of steps a, b, c, d
		want []int
	}{
		{[][]string{nil, nil, nil}, []int{1, 1, 1}},
		{[][]string{nil, {"a"}, {"b"}}, []int{0, 0, 0}},
		// c runs beside a and b, which wait for each other: one group.
		{[][]string{nil, {"a"}, nil, {"b", "c"}}, []int{1, 1, 1, 0}},
		{[][]string{nil, nil, {"a", "b"}, {"a", "b"}}, []int{1, 1, 2, 2}},
		// d waits for a only, through b: a is alone, b c d run at once.
		{[][]string{nil, {"a"}, {"a"}, {"b"}}, []int{0, 1, 1, 1}},
	} {
		var steps []Step
		for i, d := range tc.deps {
			steps = append(steps, Step{ID: string(rune('a' + i)), DependsOn: d})
		}
		if got := stepGroups(steps); !slices.Equal(got, tc.want) {
			t.Errorf("%v: groups %v, want %v", tc.deps, got, tc.want)
		}
	}
	world := worldmodel.New(worldmodel.Config{})
	reg, err := tools.NewRegistry(tools.Options{Grants: map[string][]string{"cli": {"*"}}, Log: quiet, Journal: world})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	for _, name := range []string{"light.on", "log.note"} {
		if err := reg.Register("x", tools.Func(tools.Spec{Name: name, Description: name},
			func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Result{}, nil })); err != nil {
			t.Fatal(err)
		}
	}
	dec := Decision{Caller: "cli", Steps: []Step{{ID: "1", Tool: "light.on"}, {ID: "2", Tool: "light.on"}, {ID: "3", Tool: "log.note", DependsOn: []string{"1", "2"}}}}
	runSteps(context.Background(), clock.Real(), reg, dec, 7)
	groups := map[string][]int{}
	for _, r := range world.Records(0, 0) {
		var c struct {
			Cycle uint64 `json:"cycle"`
			Group int    `json:"step_group"`
		}
		if err := json.Unmarshal(r.Data, &c); err != nil || c.Cycle != 7 {
			t.Fatalf("record %s: %s %v", r.Source, r.Data, err)
		}
		groups[r.Source] = append(groups[r.Source], c.Group)
	}
	if !slices.Equal(groups["light.on"], []int{1, 1}) || !slices.Equal(groups["log.note"], []int{0}) {
		t.Fatalf("recorded groups %v, want light.on's two in group 1, log.note alone", groups)
	}
}
