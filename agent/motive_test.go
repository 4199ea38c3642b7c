package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/llmtest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func heartbeat() Perception { return Perception{Trigger: "heartbeat"} }

func TestMotiveGoalFiresOnceAndRearms(t *testing.T) {
	above := 30.0
	r := newEngineRig(t, EngineConfig{GoalRefire: time.Hour, Review: true,
		Goals: []Goal{{Name: "cool_down", Source: "env.temperature", Above: &above, Text: "start the pump"}}}, robotTools)
	temp := func(v float64) {
		r.world.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: v, Unit: "°C"})
	}
	temp(25)
	for range 2 {
		if _, err := r.engine.Decide(context.Background(), heartbeat()); !errors.Is(err, ErrNoDecision) {
			t.Fatalf("idle heartbeat: %v", err)
		}
	}
	temp(31.5)
	dec, err := r.engine.Decide(context.Background(), heartbeat())
	if err != nil || dec.Path != "local" || dec.Steps[0].Tool != "pump.set" {
		t.Fatalf("%v %+v", err, dec)
	}
	tr := dec.Trace
	if tr.Motive != "cool_down" || tr.Requester != "motive" {
		t.Fatalf("%s", dump(tr))
	}
	// Still hot: not again before GoalRefire.
	temp(32)
	if _, err := r.engine.Decide(context.Background(), heartbeat()); !errors.Is(err, ErrNoDecision) {
		t.Fatalf("fired twice: %v", err)
	}
	// Back in range re-arms it.
	temp(24)
	_, _ = r.engine.Decide(context.Background(), heartbeat())
	temp(33)
	if dec, err := r.engine.Decide(context.Background(), heartbeat()); err != nil || dec.Steps[0].Tool != "pump.set" {
		t.Fatalf("did not re-arm: %v", err)
	}
	if n := len(r.model.Calls()); n != 0 {
		t.Fatalf("%d LLM calls; goals and idle heartbeats need none", n)
	}
}

func TestMotiveReviewOnlyWhenTheWorldChanged(t *testing.T) {
	r := newEngineRig(t, EngineConfig{Review: true}, robotTools)
	r.model.Script = func(req llm.Request) llmtest.Reply {
		if req.Purpose != "motive" {
			return llmtest.Reply{Err: errors.New("unexpected " + req.Purpose)}
		}
		return llmtest.Reply{Content: `{"act":true,"task":"blink the headlight 2 times"}`}
	}
	// Readings alone are not news.
	for i := range 5 {
		r.world.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: float64(20 + i)})
		if _, err := r.engine.Decide(context.Background(), heartbeat()); !errors.Is(err, ErrNoDecision) {
			t.Fatal(err)
		}
	}
	// Nor is the agent's own bookkeeping.
	r.world.Record(worldmodel.Event{Kind: "decision", Source: "agent", Priority: worldmodel.Normal})
	if _, err := r.engine.Decide(context.Background(), heartbeat()); !errors.Is(err, ErrNoDecision) {
		t.Fatal(err)
	}
	if len(r.model.Calls()) != 0 {
		t.Fatal("the LLM was asked although nothing changed")
	}
	r.world.Record(worldmodel.Event{Kind: "person_seen", Source: "front_cam", Priority: worldmodel.Normal, Message: "someone at the door"})
	dec, err := r.engine.Decide(context.Background(), heartbeat())
	if err != nil || dec.Steps[0].Tool != "headlight.blink" || string(dec.Steps[0].Params) != `{"times":2}` {
		t.Fatalf("%v %+v", err, dec)
	}
	tr := dec.Trace
	if tr.LLMCalls != 1 || tr.Motive != "review" || tr.Path != "local" {
		t.Fatalf("%s", dump(tr))
	}
	if _, err := r.engine.Decide(context.Background(), heartbeat()); !errors.Is(err, ErrNoDecision) || len(r.model.Calls()) != 1 {
		t.Fatalf("asked again without a change: %v", err)
	}
	// A health change is news; the model may see nothing to do.
	r.model.Script = func(llm.Request) llmtest.Reply { return llmtest.Reply{Content: `{"act":false,"task":""}`} }
	r.world.SetHealth("mic", "degraded")
	if _, err := r.engine.Decide(context.Background(), heartbeat()); !errors.Is(err, ErrNoDecision) || len(r.model.Calls()) != 2 {
		t.Fatalf("%v, %d calls", err, len(r.model.Calls()))
	}
}

func TestGoalConfigChecked(t *testing.T) {
	r := newEngineRig(t, EngineConfig{}, robotTools)
	for _, g := range []Goal{{Name: "x", Source: "a.b", Text: "go"}, {Name: "", Source: "a", Text: "x"}} {
		if _, err := NewEngine(EngineConfig{Goals: []Goal{g}}, nil, r.reg, r.world, nil); err == nil {
			t.Errorf("accepted %+v", g)
		}
	}
}
