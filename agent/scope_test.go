package agent

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/worldmodel"
)

var patrol = Feature{Name: "patrol", Description: "Patrol: drive around the area and look out for intruders.", Tools: []string{"drive.*"}}

func newScopedRig(t *testing.T, model llm.LLM) *engineRig {
	t.Helper()
	r := newEngineRig(t, EngineConfig{}, robotTools)
	if model != nil {
		var err error
		if r.engine, err = NewEngine(EngineConfig{Log: quiet, Features: []Feature{patrol}}, model, r.reg, r.world, nil); err != nil {
			t.Fatal(err)
		}
	} else {
		var err error
		if r.engine, err = NewEngine(EngineConfig{Log: quiet, Features: []Feature{patrol}}, r.model, r.reg, r.world, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, tl := range r.engine.EntryTools() {
		if err := r.reg.Register("llm", tl); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func names(e *Engine, scope *Feature) []string {
	var out []string
	for _, s := range e.specs(scope, false) {
		out = append(out, s.Name)
	}
	return out
}

func TestScopedToolsets(t *testing.T) {
	r := newScopedRig(t, nil)
	main := names(r.engine, nil)
	if slices.Contains(main, "drive.move") || slices.Contains(main, "drive.stop") || !slices.Contains(main, "agent.enter_patrol_mode") {
		t.Fatalf("main scope %v", main)
	}
	sub := names(r.engine, &r.engine.cfg.Features[0])
	if strings.Join(sub, ",") != "drive.move,drive.stop" {
		t.Fatalf("patrol scope %v", sub)
	}
	// The local matcher still reaches a feature's tools: "stop" is stop.
	dec, err := r.engine.Decide(context.Background(), command("stop"))
	if err != nil || dec.Steps[0].Tool != "drive.stop" {
		t.Fatalf("%v %+v", err, dec)
	}
	if _, err := NewEngine(EngineConfig{Features: []Feature{{Name: "Bad Name", Description: "x", Tools: []string{"a.*"}}}}, nil, r.reg, r.world, nil); err == nil {
		t.Fatal("bad feature name accepted")
	}
}

func TestEntryToolRunsSubPlanner(t *testing.T) {
	r := newScopedRig(t, nil)
	model := goodModel{params: map[string]string{"agent.enter_patrol_mode": `{"task":"drive forward at 20%"}`},
		intents: map[string]string{"go on patrol around the garden": intent("security", "patrol", "area", "garden")}}
	r.model.Script = model.answer
	l := r.runLoop(t, nil)
	out, err := l.Submit(context.Background(), Command{ID: "p", Caller: "cli", Text: "go on patrol around the garden"})
	if err != nil {
		t.Fatalf("%v\n%s", err, dump(out))
	}
	if len(out.Steps) != 1 || out.Steps[0].Tool != "agent.enter_patrol_mode" || !out.Steps[0].OK() {
		t.Fatalf("%s", dump(out))
	}
	// The sub-planner understood the task locally and ran it.
	if got := r.invoked(); len(got) != 1 || got[0] != `drive.move {"direction":"forward","speed":0.2}` {
		t.Fatalf("invoked %v", got)
	}
	res := out.Steps[0].Result.Value.(ModeResult)
	if res.Mode != "patrol" || res.Trace.Scope != "patrol" || len(res.Steps) != 1 {
		t.Fatalf("%s", dump(res))
	}
	// The main planner was never shown the feature's tools.
	for _, c := range r.model.Calls() {
		if c.Purpose == "plan" && strings.Contains(string(c.Schema), "drive.move") {
			t.Fatal("main planner saw a feature tool")
		}
	}
}

func TestPreemptionCancelsSubPlanner(t *testing.T) {
	// The main decision (classify, plan) is answered; the sub-planner's
	// first call, the third in all, blocks like a slow model.
	model := newBlockingLLM(3, func(req llm.Request) (llm.Response, error) {
		switch req.Purpose {
		case "classify":
			return llm.Response{Content: intent("security", "patrol", "area")}, nil
		case "plan":
			return llm.Response{Content: `{"steps":[{"id":"1","tool":"agent.enter_patrol_mode","params":{"task":"sweep the yard in a slow circle"},"depends_on":[]}]}`}, nil
		}
		return llm.Response{}, llm.ErrUnavailable
	})
	r := newScopedRig(t, model)
	l := r.runLoop(t, nil)
	done := make(chan Outcome, 1)
	go func() {
		out, _ := l.Submit(context.Background(), Command{ID: "p", Caller: "cli", Text: "patrol the area"})
		done <- out
	}()
	select {
	case <-model.started:
	case <-time.After(2 * time.Second):
		t.Fatal("the sub-planner never called the LLM")
	}
	l.Interrupt(worldmodel.Event{Kind: "wake_word", Source: "mic", Priority: worldmodel.High})
	model.preempted(t, "the sub-planner's LLM call")
	out := <-done
	if out.Preempted == "" || len(out.Steps) != 1 || out.Steps[0].OK() || len(r.invoked()) != 0 {
		t.Fatalf("%s", dump(out))
	}
}
