package agent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/toolstest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestPromptsStablePrefixGuidesContext(t *testing.T) {
	r := newEngineRig(t, EngineConfig{Device: "sim-bot", Skills: []SkillDoc{
		{Name: "safety", Description: "rules for moving", Inline: true, Text: "Never drive when a person is within one metre."},
		{Name: "camera", Description: "how to aim the camera", Tools: []string{"pan.*"},
			Text: "Angles: 0 is far left, 90 straight ahead, 180 far right. Sweep in steps of 30."},
	}}, robotTools)
	model := goodModel{params: robotParams, intents: map[string]string{
		"look left":         intent("security", "turn", "camera pan servo angle", "left"),
		"light up the path": intent("navigation", "illuminate", "headlight", "path"),
	}}
	r.model.Script = model.answer
	sys := r.engine.SystemPrompt()
	if !strings.Contains(sys, "Never drive when a person") || !strings.Contains(sys, "- camera: how to aim the camera") ||
		strings.Contains(sys, "Sweep in steps") || !strings.Contains(sys, "sim-bot") {
		t.Fatalf("system prompt:\n%s", sys)
	}
	for i, text := range []string{"look left", "light up the path", "look left"} {
		r.world.Append(worldmodel.Observation{Source: "env.lux", Kind: worldmodel.Reading, Value: float64(10 * i), Unit: "lx"})
		p := command(text)
		p.Summary = r.world.Summary(512)
		p.Context = []hooks.Contribution{{Plugin: "weather", Text: "dusk, light rain"}}
		if _, err := r.engine.Decide(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	calls := r.model.Calls()
	for i, c := range calls {
		// Byte-identical prefix: Ollama reuses its KV cache.
		if c.System != sys {
			t.Fatalf("system prompt changed in a %s call", c.Purpose)
		}
		// Stable first: catalogue, world, then the call's own text.
		last := c.Messages[len(c.Messages)-1].Content
		head, tail, ok := strings.Cut(last, "\n\n")
		// The catalogue leaves out what the llm caller may not run.
		if !ok || !strings.HasPrefix(head, "Tools:\n- ") || strings.Contains(head, "admin.reboot") || !strings.Contains(head, "\nWorld now:\n") ||
			!strings.Contains(head, "env.lux") || !strings.Contains(tail, "- weather: dusk, light rain\n") {
			t.Fatalf("catalogue, world summary or context misplaced in %s:\n%s", c.Purpose, last)
		}
		// The calls of one decision share everything up to their own text.
		if i > 0 && c.Purpose != "classify" {
			prev := calls[i-1].Messages[0].Content
			if !strings.HasPrefix(prev, head+"\n\n") {
				t.Fatalf("%s call does not share the decision's prefix", c.Purpose)
			}
		}
		offersPan := strings.Contains(tail, "pan.set")
		if offersPan != strings.Contains(tail, "Sweep in steps of 30") {
			t.Fatalf("on-demand guide not given exactly when pan is offered (%s):\n%s", c.Purpose, last)
		}
	}
	if err := r.engine.SetSkills([]SkillDoc{{Name: "x"}}); err == nil {
		t.Fatal("empty guide accepted")
	}
}

// A scope whose skills do not fit the catalogue budget gets none: the
// calls then describe only the candidates they offer.
func TestCatalogueBudget(t *testing.T) {
	for _, bc := range []struct {
		budget int
		want   bool
	}{{0, true}, {200, false}, {-1, false}} {
		r := newEngineRig(t, EngineConfig{CatalogueBytes: bc.budget}, robotTools)
		r.model.Script = goodModel{params: robotParams, intents: map[string]string{"look left": intent("security", "turn", "camera pan servo angle", "left")}}.answer
		if _, err := r.engine.Decide(context.Background(), command("look left")); err != nil {
			t.Fatal(err)
		}
		for _, c := range r.model.Calls() {
			msg := c.Messages[0].Content
			listed := strings.HasPrefix(msg, "Tools:\n") && strings.Contains(msg, "- pump.set: ")
			if listed != bc.want || !bc.want && strings.Contains(msg, "pump.set") {
				t.Fatalf("budget %d: %s call\n%s", bc.budget, c.Purpose, msg)
			}
		}
	}
}

// The catalogue is kept between decisions and rebuilt when a tool changes.
func TestCatalogueFollowsTools(t *testing.T) {
	r := newEngineRig(t, EngineConfig{}, robotTools)
	r.model.Script = goodModel{params: robotParams, intents: map[string]string{"look left": intent("security", "turn", "camera pan servo angle", "left")}}.answer
	decide := func() string {
		r.model.Reset()
		if _, err := r.engine.Decide(context.Background(), command("look left")); err != nil {
			t.Fatal(err)
		}
		return r.model.Calls()[0].Messages[0].Content
	}
	if strings.Contains(decide(), "siren.wail") {
		t.Fatal("a tool listed before it exists")
	}
	if err := r.reg.Register("robot", tools.Func(tools.Spec{Name: "siren.wail", Description: "Wail the siren.", Permission: "actuate",
		Params: json.RawMessage(`{"type":"object"}`)}, nil)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(decide(), "- siren.wail: Wail the siren.\n") {
		t.Fatal("a new tool is missing from the catalogue")
	}
}

func TestSkillsReadTool(t *testing.T) {
	r := newEngineRig(t, EngineConfig{Skills: []SkillDoc{{Name: "camera", Description: "aiming", Text: "Use pan.set."}}}, robotTools)
	if err := r.reg.Register("llm", r.engine.SkillTool()); err != nil {
		t.Fatal(err)
	}
	res, err := r.reg.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "skills.read", Params: []byte(`{"name":"camera"}`)})
	if err != nil || res.Value.(map[string]any)["text"] != "Use pan.set." {
		t.Fatalf("%v %+v", err, res)
	}
	if _, err := r.reg.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "skills.read", Params: []byte(`{"name":"nope"}`)}); err == nil ||
		!strings.Contains(err.Error(), "guides: camera") {
		t.Fatalf("%v", err)
	}
	if _, err := r.reg.Invoke(context.Background(), tools.Call{Caller: "mqtt", Tool: "skills.read", Params: []byte(`{"name":"camera"}`)}); err == nil {
		t.Fatal("internal tool offered over MQTT")
	}
}

func TestContextSourceDegradesSilently(t *testing.T) {
	hk := hooks.NewManager(quiet)
	good := &ContextSource{Name: "memory", Fetch: func(_ context.Context, perception string) (string, error) {
		return "the owner is called Ada; asked: " + perception, nil
	}}
	down := &ContextSource{Name: "weather", Fetch: func(context.Context, string) (string, error) {
		return "", errors.New("connection refused")
	}}
	slow := &ContextSource{Name: "slow", Timeout: 20 * time.Millisecond, Fetch: func(ctx context.Context, _ string) (string, error) {
		<-ctx.Done()
		return "too late", nil
	}}
	if err := hk.AddAll(good, down, slow); err != nil {
		t.Fatal(err)
	}
	p := hooks.Plan{Perception: "hello"}
	start := time.Now()
	if err := hk.BeforePlan(context.Background(), &p); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > time.Second {
		t.Fatal("a slow source held up the decision")
	}
	if len(p.Context) != 1 || p.Context[0].Plugin != "memory" || !strings.Contains(p.Context[0].Text, "asked: hello") {
		t.Fatalf("%+v", p.Context)
	}
}

// The prompts carry the top-K candidates only: their size must not grow
// with the number of registered tools.
func TestPromptSizeIndependentOfToolCount(t *testing.T) {
	const text = "it is getting dark, light the way"
	bytesFor := func(n int) (engine, baseline int) {
		r := newEngineRig(t, EngineConfig{}, append(toolstest.Synthetic(n), robotTools...))
		r.model.Script = goodModel{params: robotParams, intents: map[string]string{text: intent("navigation", "illuminate", "headlight", "ahead")}}.answer
		dec, err := r.engine.Decide(context.Background(), command(text))
		if err != nil {
			t.Fatal(err)
		}
		return dec.Trace.PromptBytes, baselinePromptBytes(r.reg.List(), text)
	}
	e5, b5 := bytesFor(5)
	e200, b200 := bytesFor(200)
	if e200 > e5*5/4 {
		t.Fatalf("prompt grew with tools: %d bytes at 5 tools, %d at 200", e5, e200)
	}
	if b200 < 10*b5/2 {
		t.Fatalf("baseline should grow: %d → %d", b5, b200)
	}
	t.Logf("prompt bytes per decision: engine %d → %d, all-tools baseline %d → %d", e5, e200, b5, b200)
}

// baselinePromptBytes is the prompt of the usual alternative: one
// tool-calling request that carries every skill's spec.
func baselinePromptBytes(specs []tools.Spec, text string) int {
	var skills []tools.Spec
	for _, s := range specs {
		if !s.Internal {
			skills = append(skills, s)
		}
	}
	b, _ := json.Marshal(tools.OllamaTools(skills))
	return len("You are a robot. Call the tools that carry out the request.") + len(text) + len(b)
}

type memKV struct {
	m    map[string]any
	gets int
}

func (k *memKV) Get(bucket, key string, v any) (bool, error) {
	k.gets++
	x, ok := k.m[bucket+"/"+key]
	if ok {
		*(v.(*[]float32)) = x.([]float32)
	}
	return ok, nil
}

func (k *memKV) Put(bucket, key string, v any) error {
	k.m[bucket+"/"+key] = v
	return nil
}

func TestEmbeddingCache(t *testing.T) {
	kv := &memKV{m: map[string]any{}}
	var embedded [][]string
	embed := func(texts []string) ([][]float32, error) {
		embedded = append(embedded, texts)
		out := make([][]float32, len(texts))
		for i, tx := range texts {
			// A stand-in model: the lexical vector of the text.
			out[i] = newLexicon([]string{tx}).dense(tx)
		}
		return out, nil
	}
	text := "it is getting dark, light the way"
	decide := func(r *engineRig) *Trace {
		r.model.Script = goodModel{params: robotParams, intents: map[string]string{text: intent("navigation", "illuminate", "headlight", "ahead")}}.answer
		dec, err := r.engine.Decide(context.Background(), command(text))
		if err != nil {
			t.Fatal(err)
		}
		return dec.Trace
	}
	r := newEngineRig(t, EngineConfig{EmbedModel: "minilm"}, robotTools)
	r.engine.index.kv = kv
	r.model.EmbedFunc = embed
	tr := decide(r)
	if tr.Embedder != "minilm" || tr.EmbedCalls != 2 || len(embedded) != 2 || len(embedded[0]) != len(robotTools)+1 { // + tools.stats
		t.Fatalf("first decision: %d embed calls %v\n%s", tr.EmbedCalls, embedded, dump(tr))
	}
	if tr := decide(r); tr.EmbedCalls != 1 {
		t.Fatalf("tool vectors not cached: %d calls", tr.EmbedCalls)
	}
	// A restarted agent finds them in the store.
	embedded = nil
	r2 := newEngineRig(t, EngineConfig{EmbedModel: "minilm"}, robotTools)
	r2.engine.index.kv = kv
	r2.model.EmbedFunc = embed
	if tr := decide(r2); tr.EmbedCalls != 1 || len(embedded) != 1 {
		t.Fatalf("store not used: %d calls", tr.EmbedCalls)
	}
	// A changed description is embedded again, alone.
	r2.reg.Unregister("pump.set")
	var changed tools.Spec
	for _, s := range robotTools {
		if s.Name == "pump.set" {
			changed = s
		}
	}
	changed.Description = "Switch the garden pump on or off."
	_ = r2.reg.Register("robot", tools.Func(changed, nil))
	embedded = nil
	if tr := decide(r2); tr.EmbedCalls != 2 || len(embedded[0]) != 1 || !strings.Contains(embedded[0][0], "garden pump") {
		t.Fatalf("%d calls, embedded %v", tr.EmbedCalls, embedded)
	}
	// No embedding model: lexical, and no failing call on every decision.
	r3 := newEngineRig(t, EngineConfig{EmbedModel: "minilm"}, robotTools)
	r3.model.EmbedFunc = func([]string) ([][]float32, error) { return nil, llm.ErrNoEmbedModel }
	if tr := decide(r3); tr.Embedder != "lexical" || len(tr.Notes) == 0 {
		t.Fatalf("%s", dump(tr))
	}
	if tr := decide(r3); tr.EmbedCalls != 0 {
		t.Fatal("retried the embedding model at once")
	}
	// A model answering with fewer vectors than texts: lexical, no panic.
	for _, toolBatch := range []bool{true, false} { // the tools' batch, or the intents' (at most 3 texts)
		r4 := newEngineRig(t, EngineConfig{EmbedModel: "minilm"}, robotTools)
		r4.model.EmbedFunc = func(texts []string) ([][]float32, error) {
			out, err := embed(texts)
			if len(texts) > 3 == toolBatch {
				out = out[:len(texts)-1]
			}
			return out, err
		}
		if tr := decide(r4); tr.Embedder != "lexical" || !strings.Contains(strings.Join(tr.Notes, "\n"), "vectors for") {
			t.Fatalf("short answer (tool batch %v): %s", toolBatch, dump(tr))
		}
	}
}
