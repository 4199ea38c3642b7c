package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/toolstest"
)

// BenchmarkLLMPromptPerDecision: LLM calls, prompt bytes and prompt tokens
// of one LLM-path decision, through the Ollama adapter to the fake server,
// with 5, 50 and 200 registered tools; against the usual alternative, one
// tool-calling request that carries every tool spec. Tokens are the fake's
// count (words and punctuation marks, close to a BPE tokenizer).
func BenchmarkLLMPromptPerDecision(b *testing.B) {
	const text = "it is getting dark, light the way"
	for _, n := range []int{5, 50, 200} {
		b.Run(fmt.Sprintf("tools=%d", n), func(b *testing.B) {
			fake := ollamatest.Start(b, "tiny:latest")
			fake.OnRequest(script(
				map[string]string{text: `{"scenario":"navigation","intents":[{"action":"switch on","object":"lamp","constraints":["front"]}]}`},
				map[string]string{"lamp.set": `{"on":true}`, "wheels.drive": `{"speed":0.2}`}))
			ln := newLLMNode(b, true, fake.URL(), "")
			for _, s := range toolstest.Synthetic(n - 2) { // besides the lamp and the wheels
				if err := ln.Tools.Register("bench", tools.Func(s, func(context.Context, json.RawMessage) (tools.Result, error) {
					return tools.Result{}, nil
				})); err != nil {
					b.Fatal(err)
				}
			}
			var skills []tools.Spec // what the baseline sends: every skill
			for _, s := range ln.Tools.List() {
				if !s.Internal {
					skills = append(skills, s)
				}
			}
			e := ln.Engine()
			p := agent.Perception{Trigger: "command", Command: &agent.Command{ID: "b", Caller: "cli", Text: text}, Summary: ln.World.Summary(2048)}
			var calls, bytes, tokens float64
			b.ResetTimer()
			for b.Loop() {
				fake.Reset()
				dec, err := e.Decide(context.Background(), p)
				if err != nil || len(dec.Steps) != 1 || dec.Steps[0].Tool != "lamp.set" {
					b.Fatalf("%v %+v", err, dec.Steps)
				}
				for _, r := range fake.Requests() {
					if r.Chat != nil {
						calls++
						bytes += float64(r.PromptBytes)
						tokens += float64(r.PromptTokens)
					}
				}
			}
			b.StopTimer()
			iters := float64(b.N)
			b.ReportMetric(calls/iters, "llm_calls/op")
			b.ReportMetric(bytes/iters, "prompt_bytes/op")
			b.ReportMetric(tokens/iters, "prompt_tokens/op")

			// Baseline: every spec in one tool-calling request.
			fake.Reset()
			fake.Push(ollamatest.Answer{Content: ""})
			var apiTools api.Tools
			raw, _ := json.Marshal(tools.OllamaTools(skills))
			if err := json.Unmarshal(raw, &apiTools); err != nil {
				b.Fatal(err)
			}
			base, _ := local.ParseHost(fake.URL())
			cl := api.NewClient(base, http.DefaultClient)
			err := cl.Chat(context.Background(), &api.ChatRequest{Model: "tiny", Tools: apiTools, Messages: []api.Message{
				{Role: "system", Content: e.SystemPrompt()},
				{Role: "user", Content: text + "\nWorld now:\n" + p.Summary},
			}}, func(api.ChatResponse) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
			r := fake.Requests()[0]
			b.ReportMetric(float64(len(skills)), "skills")
			b.ReportMetric(1, "baseline_calls/op")
			b.ReportMetric(float64(r.PromptBytes), "baseline_prompt_bytes/op")
			b.ReportMetric(float64(r.PromptTokens), "baseline_prompt_tokens/op")
			ln.Close()
		})
	}
}
