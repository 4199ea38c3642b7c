// Package agenttest runs a real agent loop that is busy with a slow
// Normal-priority job, so that a sensor's test can show its event preempting
// that job. The loop, the registry and the world model are the real ones;
// only the job is made up.
package agenttest

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// SlowJob is the tool the busy loop runs: it holds its step until its
// context ends (or a minute passes).
const SlowJob = "arm.sweep"

// Busy is a running loop whose slow job has started.
type Busy struct {
	World *worldmodel.Model
	Tools *tools.Registry
	Loop  *agent.Loop
	// Job delivers the slow job's outcome once its cycle ends.
	Job <-chan agent.Outcome
	// Ctx ends when Stop is called: run the sensor under it.
	Ctx context.Context

	cancel   context.CancelFunc
	loopDone chan error
	stopOnce sync.Once
}

// StartBusy registers extra tools (every caller the tests use is granted
// everything), runs the loop with the explicit path followed by d, submits
// the slow job from the CLI and returns once it is running. Stop (also run
// at cleanup) ends the loop and fails the test if it takes over 2 s.
func StartBusy(t testing.TB, world *worldmodel.Model, d agent.Decider, extra ...tools.Tool) *Busy {
	t.Helper()
	quiet := slog.New(slog.DiscardHandler)
	all := []string{"*"}
	reg, err := tools.NewRegistry(tools.Options{Log: quiet,
		Grants: map[string][]string{"cli": all, "reflex": all, "voice": all, "llm": all}})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	slow := tools.Func(tools.Spec{Name: SlowJob, Description: "a slow, normal-priority job", Permission: "actuate"},
		func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				return tools.Result{}, context.Cause(ctx)
			case <-time.After(time.Minute):
				return tools.Result{Value: "finished"}, nil
			}
		})
	for _, tl := range append([]tools.Tool{slow}, extra...) {
		if err := reg.Register("test", tl); err != nil {
			t.Fatal(err)
		}
	}
	loop := agent.New(agent.Config{Heartbeat: time.Hour, CycleTimeout: 2 * time.Minute}, world, reg, hooks.NewManager(quiet), quiet)
	loop.SetDecider(agent.Chain{agent.Explicit{}, d})
	ctx, cancel := context.WithCancel(context.Background())
	b := &Busy{World: world, Tools: reg, Loop: loop, Ctx: ctx, cancel: cancel, loopDone: make(chan error, 1)}
	go func() { b.loopDone <- loop.Run(ctx) }()
	t.Cleanup(func() { b.Stop(t) })

	job := make(chan agent.Outcome, 1)
	b.Job = job
	go func() {
		out, _ := loop.Submit(ctx, agent.Command{ID: "sweep", Caller: "cli", Tool: SlowJob})
		job <- out
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("the slow job did not start")
	}
	return b
}

// Stop ends the loop (and Ctx) and waits for it.
func (b *Busy) Stop(t testing.TB) {
	t.Helper()
	b.stopOnce.Do(func() {
		b.cancel()
		select {
		case <-b.loopDone:
		case <-time.After(2 * time.Second):
			t.Error("the agent loop did not stop within 2 s")
		}
	})
}

// Preempted waits for the slow job's outcome and checks that the High
// event by ("door/motion_start": source/kind) cancelled it; it returns
// the outcome.
func (b *Busy) Preempted(t testing.TB, by string) agent.Outcome {
	t.Helper()
	var out agent.Outcome
	select {
	case out = <-b.Job:
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not preempt the slow job", by)
	}
	if out.Preempted != by || len(out.Steps) != 1 || !strings.Contains(out.Steps[0].Error, "preempted by high "+by) {
		t.Fatalf("slow job outcome: preempted %q, steps %+v", out.Preempted, out.Steps)
	}
	return out
}

// Decider answers the cycles about an event of one of kinds with decide,
// after reporting their perception on the returned channel (16 deep); the
// other cycles it leaves undecided (agent.ErrNoDecision).
func Decider(decide func(agent.Perception) (agent.Decision, error), kinds ...string) (agent.Decider, <-chan agent.Perception) {
	d := decider{decide: decide, kinds: kinds, seen: make(chan agent.Perception, 16)}
	return d, d.seen
}

type decider struct {
	decide func(agent.Perception) (agent.Decision, error)
	kinds  []string
	seen   chan agent.Perception
}

func (d decider) Decide(_ context.Context, p agent.Perception) (agent.Decision, error) {
	if p.Event == nil || !slices.Contains(d.kinds, p.Event.Kind) {
		return agent.Decision{}, agent.ErrNoDecision
	}
	d.seen <- p
	return d.decide(p)
}

// Probe is an actuating tool named name, params its JSON Schema (empty:
// none), that does nothing but report the parameters of each call on the
// returned channel: what the test's decision made the robot do. Calls
// beyond the channel's 16 are not reported.
func Probe(name, params string) (tools.Tool, <-chan json.RawMessage) {
	calls := make(chan json.RawMessage, 16)
	spec := tools.Spec{Name: name, Description: "the test's probe " + name, Permission: "actuate"}
	if params != "" {
		spec.Params = json.RawMessage(params)
	}
	return tools.Func(spec, func(_ context.Context, p json.RawMessage) (tools.Result, error) {
		select {
		case calls <- p:
		default:
		}
		return tools.Result{}, nil
	}), calls
}

// Sink is what the runtime gives a sensor: observations into the world
// model; events recorded and sent to the loop's interrupt bus. (It has the
// methods of sensors.Sink; the agent does not import the sensor packages.)
func (b *Busy) Sink() Sink { return Sink{b.World, b.Loop} }

// Sink implements sensors.Sink on a world model and a loop.
type Sink struct {
	world *worldmodel.Model
	loop  *agent.Loop
}

func (s Sink) Observe(o worldmodel.Observation) { s.world.Append(o) }
func (s Sink) Raise(e worldmodel.Event)         { s.loop.Interrupt(s.world.Record(e)) }
