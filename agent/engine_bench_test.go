package agent

import (
	"context"
	"testing"

	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/llmtest"
	"github.com/edgeagent/edgeagent/tools/toolstest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// BenchmarkEngineDecide measures the engine's own time per decision with
// 200 registered tools and a model that answers at once (a fixed script),
// so what is measured is everything but the LLM: tool listing, the local
// matcher, prompt building, embedding match, evaluation, parsing and
// validating answers, the trace. Budget (DESIGN §9): ≤ 1 ms.
func BenchmarkEngineDecide(b *testing.B) {
	const text = "it is getting dark, light the way"
	for _, bc := range []struct {
		name      string
		planBelow float64
		answers   map[string]string
	}{
		{"llm_plan", 0, map[string]string{
			"classify": intent("navigation", "illuminate", "headlight", "ahead"),
			"plan":     `{"steps":[{"id":"1","tool":"headlight.set","params":{"on":true},"depends_on":[]}]}`}},
		{"llm_params", 0.3, map[string]string{
			"classify": intent("navigation", "illuminate", "headlight", "ahead"),
			"params":   `{"on":true}`}},
		{"local", 0, nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			specs := append(toolstest.Synthetic(200-len(robotTools)), robotTools...)
			r := newEngineRig(b, EngineConfig{PlanBelow: bc.planBelow, Log: quiet}, specs)
			for i := range 20 {
				r.world.Append(worldmodel.Observation{Source: "env.temperature", Kind: worldmodel.Reading, Value: 20 + float64(i)})
			}
			answers := bc.answers
			r.model.Script = func(req llm.Request) llmtest.Reply { return llmtest.Reply{Content: answers[req.Purpose]} }
			p := command(text)
			if bc.name == "local" {
				p = command("turn on the headlight")
			}
			p.Summary = r.world.Summary(2048)
			dec, err := r.engine.Decide(context.Background(), p)
			if err != nil || len(dec.Steps) != 1 || dec.Steps[0].Tool != "headlight.set" {
				b.Fatalf("%v %s", err, dump(dec))
			}
			wantCalls := dec.Trace.LLMCalls
			promptBytes := dec.Trace.PromptBytes
			b.ReportAllocs()
			for b.Loop() {
				r.model.Reset()
				dec, err := r.engine.Decide(context.Background(), p)
				if err != nil || dec.Trace.LLMCalls != wantCalls {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(wantCalls), "llm_calls/op")
			b.ReportMetric(float64(promptBytes), "prompt_bytes/op")
		})
	}
}
