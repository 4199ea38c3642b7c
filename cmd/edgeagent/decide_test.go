package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/tools"
)

func TestPrintOutcome(t *testing.T) {
	tr := &agent.Trace{Perception: "it is getting dark, light the way", Path: "llm", Scenario: "navigation", Confidence: 0.48,
		Intents:    []agent.Intent{{Action: "illuminate", Object: "headlight", Constraints: []string{"ahead"}}},
		Embedder:   "lexical",
		Candidates: []agent.Candidate{{Tool: "headlight.set", Score: 0.48, Semantic: 0.33, History: 0.5, Permission: 1}},
		LLMCalls:   2, PromptBytes: 2289, PromptTokens: 610, EvalTokens: 31,
		Calls:   []agent.CallTrace{{Purpose: "classify", PromptBytes: 873, PromptTokens: 250, EvalTokens: 20, MS: 412.5, LoadMS: 3}},
		Timings: []agent.Timing{{Step: "classify", MS: 412.5}}, TotalMS: 700}
	out := agent.Outcome{
		Decision: &agent.Decision{Path: "llm", Trace: tr, Steps: []agent.Step{{ID: "1", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}}},
		Steps:    []agent.StepResult{{ID: "1", Tool: "headlight.set", Result: &tools.Result{Value: "on"}}},
	}
	var b strings.Builder
	printOutcome(&b, out)
	for _, want := range []string{
		"path:        llm   scenario: navigation   confidence: 0.48",
		"intent:      illuminate headlight ahead",
		"headlight.set  0.480  0.330     0.500    1           0.000",
		"llm calls:   2 (prompt 2289 bytes, 610 tokens; answers 31 tokens)",
		"classify     873 bytes   250+20   tokens    412.5 ms (load 3.0 ms)",
		`1 headlight.set {"on":true} → ok {"value":"on"}`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in\n%s", want, b.String())
		}
	}
}
