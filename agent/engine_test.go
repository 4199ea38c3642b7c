package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/llmtest"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// robotTools are skills shaped like the sim board's actuators.
var robotTools = []tools.Spec{
	{Name: "headlight.set", Description: "Switch the headlight (the front white lamp) on or off.", Permission: "actuate",
		Scenarios: []string{"navigation", "security"},
		Params:    json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`)},
	{Name: "headlight.blink", Description: "Blink the headlight a number of times to signal.", Permission: "actuate",
		Scenarios: []string{"interaction", "security"},
		Params:    json.RawMessage(`{"type":"object","properties":{"times":{"type":"integer","minimum":1,"maximum":10}},"required":["times"],"additionalProperties":false}`)},
	{Name: "pan.set_angle", Description: "Turn the camera pan servo to an absolute angle in degrees (0 left, 90 ahead, 180 right).", Permission: "actuate",
		Scenarios: []string{"navigation", "security"},
		Params: json.RawMessage(`{"type":"object","properties":{"degrees":{"type":"number","minimum":0,"maximum":180,"description":"target angle"},` +
			`"wait":{"type":"boolean","default":false}},"required":["degrees"],"additionalProperties":false}`)},
	{Name: "pan.move_by", Description: "Turn the camera pan servo by a relative angle in degrees, positive or negative.", Permission: "actuate",
		Scenarios: []string{"navigation", "security"},
		Params: json.RawMessage(`{"type":"object","properties":{"degrees":{"type":"number","minimum":-360,"maximum":360},` +
			`"wait":{"type":"boolean","default":false}},"required":["degrees"],"additionalProperties":false}`)},
	{Name: "pan.stop", Description: "Stop the pan servo where it is.", Permission: "actuate", Scenarios: []string{"navigation", "security"}},
	{Name: "drive.move", Description: "Drive the robot forward or backward at a speed.", Permission: "actuate",
		Scenarios: []string{"navigation"},
		Params: json.RawMessage(`{"type":"object","properties":{"direction":{"type":"string","enum":["forward","backward"]},` +
			`"speed":{"type":"number","minimum":0,"maximum":1,"default":0.3,"description":"fraction of full speed"}},"required":["direction"],"additionalProperties":false}`)},
	{Name: "drive.stop", Description: "Stop the drive motors at once.", Permission: "actuate", Scenarios: []string{"navigation"}},
	{Name: "pump.set", Description: "Switch the water pump relay on or off (watering the plants).", Permission: "actuate",
		Scenarios: []string{"maintenance", "environment"},
		Params:    json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`)},
	{Name: "buzzer.beep", Description: "Beep the buzzer: count beeps of duration seconds with gap seconds between them.", Permission: "actuate", Scenarios: []string{"interaction"},
		Params: json.RawMessage(`{"type":"object","properties":{"count":{"type":"integer","minimum":1,"maximum":20,"default":1},` +
			`"duration":{"type":"number","minimum":0.01,"maximum":5,"default":0.2,"description":"seconds each beep lasts"},` +
			`"gap":{"type":"number","minimum":0.01,"maximum":5,"default":0.2,"description":"seconds between beeps"}},"additionalProperties":false}`)},
	{Name: "notes.publish", Description: "Publish a short text note on MQTT for the people watching the robot.", Permission: "publish",
		Params: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","maxLength":200}},"required":["text"],"additionalProperties":false}`)},
	{Name: "admin.reboot", Description: "Reboot the robot's computer.", Permission: "admin", Scenarios: []string{"maintenance"}},
}

type engineRig struct {
	t      *testing.T
	reg    *tools.Registry
	world  *worldmodel.Model
	model  *llmtest.LLM
	engine *Engine

	mu    sync.Mutex
	calls []string // tool invocations, "name params"
}

func newEngineRig(t testing.TB, cfg EngineConfig, specs []tools.Spec) *engineRig {
	t.Helper()
	r := &engineRig{world: worldmodel.New(worldmodel.Config{}), model: &llmtest.LLM{}}
	if tt, ok := t.(*testing.T); ok {
		r.t = tt
	}
	grants := map[string][]string{"cli": {"*"}, "llm": {"read", "actuate", "publish"}, "motive": {"read", "actuate"},
		"mqtt": {"read"}, "reflex": {"actuate"}}
	reg, err := tools.NewRegistry(tools.Options{Grants: grants, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	r.reg = reg
	for _, s := range specs {
		s := s
		if err := reg.Register("robot", tools.Func(s, func(_ context.Context, p json.RawMessage) (tools.Result, error) {
			r.mu.Lock()
			r.calls = append(r.calls, s.Name+" "+string(p))
			r.mu.Unlock()
			return tools.Result{Value: "ok"}, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	for _, tl := range tools.Builtins(reg, r.world) {
		if err := reg.Register("agent", tl); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Log == nil {
		cfg.Log = quiet
	}
	r.engine, err = NewEngine(cfg, r.model, reg, r.world, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *engineRig) invoked() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func command(text string) Perception {
	return Perception{Trigger: "command", Command: &Command{ID: "t", Caller: "cli", Text: text}, Summary: "sensors (0):\n"}
}

// goodModel answers like a capable model would: classification from a
// table, the planner picks the first tool it is offered (so the engine's
// ranking decides), and parameters come from a table per tool.
type goodModel struct {
	intents map[string]string // request text -> classify answer
	params  map[string]string // tool -> params answer
}

var (
	requestRE = regexp.MustCompile(`Request \([^)]*\): (.*)\n`)
	toolRE    = regexp.MustCompile(`Task: params for the tool (\S+) `)
)

func (g goodModel) answer(req llm.Request) llmtest.Reply {
	last := req.Messages[len(req.Messages)-1].Content
	first := req.Messages[0].Content
	switch req.Purpose {
	case "classify":
		m := requestRE.FindStringSubmatch(last)
		if m == nil {
			return llmtest.Reply{Err: errors.New("fake: no request in prompt")}
		}
		if a, ok := g.intents[m[1]]; ok {
			return llmtest.Reply{Content: a}
		}
		return llmtest.Reply{Content: `{"scenario":"idle","intents":[{"action":"","object":"","constraints":[]}]}`}
	case "params":
		m := toolRE.FindStringSubmatch(first)
		if m == nil {
			return llmtest.Reply{Err: errors.New("fake: no tool in prompt")}
		}
		return llmtest.Reply{Content: g.params[m[1]]}
	case "plan":
		names, err := llmtest.PlanTools(req.Schema)
		if err != nil {
			return llmtest.Reply{Err: err}
		}
		tool := names[0]
		return llmtest.Reply{Content: fmt.Sprintf(`{"steps":[{"id":"a","tool":%q,"params":%s,"depends_on":[]}]}`, tool, g.params[tool])}
	}
	return llmtest.Reply{Err: errors.New("fake: unexpected purpose " + req.Purpose)}
}

var robotParams = map[string]string{
	"headlight.set": `{"on":true}`, "headlight.blink": `{"times":3}`, "pan.set_angle": `{"degrees":45}`, "pan.move_by": `{"degrees":-30}`, "pan.stop": `{}`,
	"drive.move": `{"direction":"forward"}`, "drive.stop": `{}`, "pump.set": `{"on":true}`,
	"buzzer.beep": `{"count":2}`, "notes.publish": `{"text":"hello"}`, "admin.reboot": `{}`,
}

func intent(scenario, action, object string, constraints ...string) string {
	c, _ := json.Marshal(append([]string{}, constraints...))
	return fmt.Sprintf(`{"scenario":%q,"intents":[{"action":%q,"object":%q,"constraints":%s}]}`, scenario, action, object, c)
}

func TestEngineLocalMatcherZeroLLMCalls(t *testing.T) {
	r := newEngineRig(t, EngineConfig{}, robotTools)
	dec, err := r.engine.Decide(context.Background(), command("turn on the headlight"))
	if err != nil {
		t.Fatal(err)
	}
	tr := dec.Trace
	if dec.Path != "local" || len(dec.Steps) != 1 || dec.Steps[0].Tool != "headlight.set" || string(dec.Steps[0].Params) != `{"on":true}` {
		t.Fatalf("%+v", dec)
	}
	if tr.LLMCalls != 0 || len(r.model.Calls()) != 0 || dec.Caller != "llm" {
		t.Fatalf("local path made LLM calls: %+v", tr)
	}
	if _, err := json.Marshal(dec); err != nil {
		t.Fatalf("trace not JSON-encodable: %v", err)
	}
}

func TestEngineFiveStepsTable(t *testing.T) {
	model := goodModel{params: robotParams, intents: map[string]string{
		"it is getting dark, light the way":       intent("navigation", "illuminate", "headlight", "ahead"),
		"look towards the left side of the room":  intent("security", "turn", "camera pan servo", "absolute angle", "left"),
		"the plants look thirsty":                 intent("environment", "water", "plants", "pump"),
		"let people know you are here":            intent("interaction", "sound", "buzzer", "twice"),
		"tell the people watching that all is ok": intent("interaction", "publish", "note", "all is ok"),
		"back up a little":                        intent("navigation", "drive", "backward", "slowly"),
	}}
	want := map[string]string{
		"it is getting dark, light the way":       "headlight.set",
		"look towards the left side of the room":  "pan.set_angle",
		"the plants look thirsty":                 "pump.set",
		"let people know you are here":            "buzzer.beep",
		"tell the people watching that all is ok": "notes.publish",
		"back up a little":                        "drive.move",
	}
	r := newEngineRig(t, EngineConfig{}, robotTools)
	r.model.Script = model.answer
	for text, tool := range want {
		t.Run(text, func(t *testing.T) {
			r.model.Reset()
			dec, err := r.engine.Decide(context.Background(), command(text))
			if err != nil {
				t.Fatalf("%v\n%s", err, dump(dec.Trace))
			}
			tr := dec.Trace
			if dec.Path != "llm" || len(dec.Steps) != 1 || dec.Steps[0].Tool != tool {
				t.Fatalf("chose %+v, want %s\n%s", dec.Steps, tool, dump(tr))
			}
			if tr.LLMCalls != 2 || len(r.model.Calls()) != 2 {
				t.Fatalf("%d LLM calls, want 2", tr.LLMCalls)
			}
			// The params went through the registry's validation: defaults
			// are filled in.
			if tool == "drive.move" && string(dec.Steps[0].Params) != `{"direction":"forward","speed":0.3}` {
				t.Fatalf("params %s", dec.Steps[0].Params)
			}
			if len(tr.Candidates) == 0 || tr.Candidates[0].Tool != tool {
				t.Fatalf("ranking %+v", tr.Candidates)
			}
			for _, c := range tr.Candidates {
				if c.Score <= 0 || c.Score > 1 || c.History != 0.5 {
					t.Fatalf("candidate %+v", c)
				}
			}
		})
	}
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// runLoop runs a loop with the engine after the explicit fast path.
func (r *engineRig) runLoop(t *testing.T, hk *hooks.Manager) *Loop {
	t.Helper()
	if hk == nil {
		hk = hooks.NewManager(quiet)
	}
	l := New(Config{Heartbeat: time.Hour}, r.world, r.reg, hk, quiet)
	l.SetDecider(Chain{Explicit{}, r.engine})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = l.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return l
}

func TestEngineNeverActsOnInvalidAnswers(t *testing.T) {
	const text = "it is getting dark, light the way"
	good := intent("navigation", "illuminate", "headlight", "ahead")
	plan := func(steps string) string { return `{"steps":` + steps + `}` }
	cases := []struct {
		name    string
		replies []string
		refusal string
	}{
		{"classification not JSON", []string{"sure! I will turn on the light", "turn it on", "ok"}, "no tool is similar enough"},
		{"not JSON", []string{good, "turn it on", "ok"}, "not JSON"},
		{"empty answers", []string{good, "", "  "}, "empty answer"},
		{"wrong types", []string{good, plan(`[{"id":"a","tool":"headlight.set","params":{"on":"yes"},"depends_on":[]}]`),
			plan(`[{"id":"a","tool":"headlight.set","params":{"on":1},"depends_on":[]}]`)}, "/on"},
		{"tool that does not exist", []string{good, plan(`[{"id":"a","tool":"laser.fire","params":{},"depends_on":[]}]`),
			plan(`[{"id":"a","tool":"laser.fire","params":{},"depends_on":[]}]`)}, `"laser.fire" is not one of the tools offered`},
		{"tool not offered (no permission)", []string{good, plan(`[{"id":"a","tool":"admin.reboot","params":{},"depends_on":[]}]`),
			plan(`[{"id":"a","tool":"admin.reboot","params":{},"depends_on":[]}]`)}, "not one of the tools offered"},
		{"params out of schema", []string{good, plan(`[{"id":"a","tool":"headlight.set","params":{"on":true,"level":3},"depends_on":[]}]`),
			plan(`[{"id":"a","tool":"headlight.set","params":{},"depends_on":[]}]`)}, "violate the schema"},
		{"a cycle", []string{good, plan(`[{"id":"a","tool":"headlight.set","params":{"on":true},"depends_on":["b"]},{"id":"b","tool":"headlight.set","params":{"on":false},"depends_on":["a"]}]`),
			plan(`[{"id":"a","tool":"headlight.set","params":{"on":true},"depends_on":["a"]}]`)}, "cycle"},
		{"unknown dependency", []string{good, plan(`[{"id":"a","tool":"headlight.set","params":{"on":true},"depends_on":["z"]}]`),
			plan(`[{"id":"a","tool":"headlight.set","params":{"on":true},"depends_on":["z"]}]`)}, "unknown step"},
		{"trailing text", []string{good, plan(`[{"id":"a","tool":"headlight.set","params":{"on":true},"depends_on":[]}]`) + " done!",
			`{"steps":[]} {"steps":[]}`}, "not JSON"},
		{"nothing planned for a command", []string{good, plan(`[]`)}, "planned nothing"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newEngineRig(t, EngineConfig{}, robotTools)
			for _, c := range tc.replies {
				r.model.Push(llmtest.Reply{Content: c})
			}
			r.model.Script = func(llm.Request) llmtest.Reply { return llmtest.Reply{Content: "{"} }
			l := r.runLoop(t, nil)
			out, err := l.Submit(context.Background(), Command{ID: "c", Caller: "cli", Text: text})
			var refusal *RefusalError
			if !errors.As(err, &refusal) || !strings.Contains(err.Error(), tc.refusal) {
				t.Fatalf("got %v, want a refusal mentioning %q", err, tc.refusal)
			}
			if got := r.invoked(); len(got) != 0 || len(out.Steps) != 0 {
				t.Fatalf("a tool ran on an invalid answer: %v", got)
			}
			if n := len(r.model.Calls()); n > 3 {
				t.Fatalf("%d LLM calls; at most 3 (one retry)", n)
			}
			if tr := out.Decision.Trace; tr == nil || tr.Refusal == "" {
				t.Fatalf("no refusal in the trace: %+v", out.Decision)
			}
			evs := r.world.Events(0, worldmodel.Low, 100)
			if len(evs) == 0 || evs[len(evs)-1].Kind != "decision" || evs[len(evs)-1].Data["trace"] == nil {
				t.Fatalf("refused decision not recorded: %+v", evs)
			}
		})
	}
}

func TestEngineParamsRetryWithValidationError(t *testing.T) {
	// A high-confidence decision: proven history and a low plan threshold
	// send it to step 5 (one call with the tool's schema as format).
	r := newEngineRig(t, EngineConfig{PlanBelow: 0.5}, robotTools)
	r.model.Push(llmtest.Reply{Content: intent("security", "turn", "pan servo", "absolute angle", "left")},
		llmtest.Reply{Content: `{"degrees": 500}`}, llmtest.Reply{Content: `{"degrees": 10}`})
	dec, err := r.engine.Decide(context.Background(), command("look left"))
	if err != nil {
		t.Fatalf("%v\n%s", err, dump(dec.Trace))
	}
	calls := r.model.Calls()
	if len(calls) != 3 || calls[1].Purpose != "params" || string(calls[1].Schema) != string(robotTools[2].Params) {
		t.Fatalf("calls %+v", calls)
	}
	retry := calls[2].Messages
	if len(retry) != 3 || retry[1].Content != `{"degrees": 500}` || !strings.Contains(retry[2].Content, "/degrees") {
		t.Fatalf("the retry does not carry the validation error: %+v", retry)
	}
	if calls[2].System != calls[0].System {
		t.Fatal("system prompt changed between calls")
	}
	if dec.Steps[0].Tool != "pan.set_angle" || string(dec.Steps[0].Params) != `{"degrees":10,"wait":false}` {
		t.Fatalf("%+v", dec.Steps)
	}

	// Parameterless tools need no call at all.
	r.model.Reset()
	r.model.Push(llmtest.Reply{Content: intent("navigation", "halt", "drive motors", "at once")})
	dec, err = r.engine.Decide(context.Background(), command("halt the motors at once"))
	if err != nil || dec.Steps[0].Tool != "drive.stop" || len(r.model.Calls()) != 1 {
		t.Fatalf("%v %+v %d calls", err, dec.Steps, len(r.model.Calls()))
	}
}

func TestEnginePermissions(t *testing.T) {
	r := newEngineRig(t, EngineConfig{}, robotTools)
	// The local matcher understands, but mqtt is only granted read.
	p := command("turn on the headlight")
	p.Command.Caller = "mqtt"
	dec, err := r.engine.Decide(context.Background(), p)
	if !strings.Contains(fmt.Sprint(err), `needs permission "actuate", which mqtt does not have`) || len(dec.Steps) != 0 {
		t.Fatalf("%v %+v", err, dec.Steps)
	}
	// On the LLM path a tool the LLM caller is not granted scores 0 for
	// permission and is never offered to the planner.
	r.model.Push(llmtest.Reply{Content: intent("maintenance", "reboot", "computer")})
	dec, err = r.engine.Decide(context.Background(), command("reboot your computer"))
	tr := dec.Trace
	if err == nil || !strings.Contains(err.Error(), "no permitted tool") || tr.Candidates[0].Tool != "admin.reboot" || tr.Candidates[0].Permission != 0 {
		t.Fatalf("%v\n%s", err, dump(tr))
	}
	// An extra grant of the requester does not widen what the LLM may do.
	p = command("reboot your computer")
	p.Command.Grants = []string{"admin"}
	r.model.Push(llmtest.Reply{Content: intent("maintenance", "reboot", "computer")})
	if _, err := r.engine.Decide(context.Background(), p); err == nil {
		t.Fatal("admin tool chosen for the llm caller")
	}
}

func TestEngineUnavailableLLM(t *testing.T) {
	r := newEngineRig(t, EngineConfig{}, robotTools)
	r.model.Script = func(llm.Request) llmtest.Reply {
		return llmtest.Reply{Err: fmt.Errorf("%w: connection refused", llm.ErrUnavailable)}
	}
	// Plain commands still work.
	dec, err := r.engine.Decide(context.Background(), command("pan to 30 degrees"))
	if err != nil || dec.Path != "local" {
		t.Fatalf("%v %+v", err, dec)
	}
	_, err = r.engine.Decide(context.Background(), command("it is getting dark, light the way"))
	if err == nil || !strings.Contains(err.Error(), "LLM is unavailable") || !strings.Contains(err.Error(), "local matcher did not understand") {
		t.Fatalf("%v", err)
	}
	// An event nobody waits for: quietly left to the reflexes.
	ev := Perception{Trigger: "event", Event: &worldmodel.Event{Kind: "motion_start", Source: "cam", Priority: worldmodel.High}}
	if _, err := r.engine.Decide(context.Background(), ev); !errors.Is(err, ErrNoDecision) {
		t.Fatalf("event while the LLM is down: %v", err)
	}
	// Without any LLM the engine is the matcher alone.
	e, err := NewEngine(EngineConfig{Log: quiet}, nil, r.reg, r.world, nil)
	if err != nil {
		t.Fatal(err)
	}
	if dec, err := e.Decide(context.Background(), command("stop")); err != nil || dec.Steps[0].Tool != "drive.stop" {
		t.Fatalf("%v %+v", err, dec)
	}
	if _, err := e.Decide(context.Background(), command("light the way")); err == nil || !strings.Contains(err.Error(), "no LLM is configured") {
		t.Fatalf("%v", err)
	}
}

func TestEngineEvents(t *testing.T) {
	r := newEngineRig(t, EngineConfig{}, robotTools)
	model := goodModel{params: robotParams, intents: map[string]string{}}
	r.model.Script = model.answer
	ev := func(p worldmodel.Priority) Perception {
		return Perception{Trigger: "event", Event: &worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: p,
			Message: "motion", Data: map[string]any{"area": 0.2}}}
	}
	for _, p := range []worldmodel.Priority{worldmodel.Low, worldmodel.Normal, worldmodel.Critical} {
		if _, err := r.engine.Decide(context.Background(), ev(p)); !errors.Is(err, ErrNoDecision) {
			t.Fatalf("%s event: %v", p, err)
		}
	}
	if len(r.model.Calls()) != 0 {
		t.Fatal("LLM called for an event below High or for an e-stop")
	}
	r.model.Push(llmtest.Reply{Content: intent("security", "point", "camera pan", "towards motion")})
	dec, err := r.engine.Decide(context.Background(), ev(worldmodel.High))
	if err != nil {
		t.Fatalf("%v %s", err, dump(dec.Trace))
	}
	calls := r.model.Calls()
	if !strings.Contains(calls[0].Messages[0].Content, `high event "motion_start" from front_cam: motion area=0.2`) {
		t.Fatalf("perception %q", calls[0].Messages[0].Content)
	}
	// The event names the camera: context relevance is high for tools
	// touching it.
	tr := dec.Trace
	if tr.Requester != "motive" || !strings.HasPrefix(dec.Steps[0].Tool, "pan.") {
		t.Fatalf("%s", dump(tr))
	}
}

// blockingLLM blocks its first Generate until the context ends, the way a
// slow model does, and reports that it saw the cancellation.
type blockingLLM struct {
	started chan struct{}
	gone    chan error
	then    func(llm.Request) (llm.Response, error)
	blockAt int // which call blocks (1: the first)
	mu      sync.Mutex
	n       int
}

func newBlockingLLM(blockAt int, then func(llm.Request) (llm.Response, error)) *blockingLLM {
	return &blockingLLM{started: make(chan struct{}, 1), gone: make(chan error, 1), then: then, blockAt: blockAt}
}

func (b *blockingLLM) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	b.mu.Lock()
	b.n++
	block := b.n == b.blockAt
	b.mu.Unlock()
	if !block {
		return b.then(req)
	}
	b.started <- struct{}{}
	<-ctx.Done()
	b.gone <- context.Cause(ctx)
	return llm.Response{}, context.Cause(ctx)
}

// preempted waits for the blocked call (what) to end, and fails t unless
// it ended within 2 s with the preemption as its cause.
func (b *blockingLLM) preempted(t *testing.T, what string) {
	t.Helper()
	select {
	case cause := <-b.gone:
		var pe *PreemptedError
		if !errors.As(cause, &pe) {
			t.Fatalf("%s ended with %v, want the preemption", what, cause)
		}
	case <-time.After(2 * time.Second):
		t.Fatalf("%s was not cancelled", what)
	}
}

func (b *blockingLLM) Embed(context.Context, []string) ([][]float32, error) {
	return nil, llm.ErrNoEmbedModel
}

func TestPreemptionCancelsLLMCall(t *testing.T) {
	r := newEngineRig(t, EngineConfig{}, robotTools)
	model := newBlockingLLM(1, func(llm.Request) (llm.Response, error) { return llm.Response{}, llm.ErrUnavailable })
	var err error
	r.engine, err = NewEngine(EngineConfig{Log: quiet}, model, r.reg, r.world, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := r.runLoop(t, nil)
	done := make(chan Outcome, 1)
	go func() {
		out, _ := l.Submit(context.Background(), Command{ID: "c", Caller: "cli", Text: "it is getting dark, light the way"})
		done <- out
	}()
	<-model.started
	l.Interrupt(worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High})
	model.preempted(t, "the in-flight LLM call")
	out := <-done
	if out.Preempted == "" || len(out.Steps) != 0 || len(r.invoked()) != 0 {
		t.Fatalf("%+v", out)
	}
	tr := out.Decision.Trace
	if tr.LLMCalls != 1 || tr.Calls[0].Error == "" {
		t.Fatalf("trace %s", dump(tr))
	}
}

func TestContextScore(t *testing.T) {
	now := time.Now()
	spec := tools.Spec{Name: "headlight.set", Touches: []string{"actuator.headlight", "env.lux"}}
	fresh := map[string]time.Time{"env.lux": now.Add(-2 * time.Minute), "front_cam.motion": now}
	cases := []struct {
		text string
		ev   *worldmodel.Event
		want float64
	}{
		{"turn the headlight on", nil, 1},                                          // names the device
		{"it is dark", &worldmodel.Event{Source: "actuator.headlight"}, 1},         // the event is about it
		{"it is dark", nil, 1 - float64(110*time.Second)/float64(290*time.Second)}, // env.lux, 2 min old
	}
	for _, c := range cases {
		if got := contextScore(spec, c.text, c.ev, fresh, now); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("%q: %v, want %v", c.text, got, c.want)
		}
	}
	if got := contextScore(tools.Spec{Name: "pump.set"}, "it is dark", nil, fresh, now); got != 0 {
		t.Errorf("untouched: %v", got)
	}
}
