package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/nodetest"
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

const decideBoard = `
data_dir: %s
device: {id: decide-bot, platform: sim}
llm: {enabled: %v, host: "%s", model: tiny, embed_model: "", timeout: 1h}
mqtt: {broker: embedded, listen: "127.0.0.1:%d", discovery: {enabled: false}}
agent: {heartbeat: 1h}
actuators: [{name: lamp, kind: led, pins: {pin: "sim:5"}}]
`

func writeDecideBoard(t *testing.T, llmOn bool, host string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "board.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(decideBoard, dir, llmOn, host, freePort(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runDecide(t *testing.T, args ...string) (agent.Outcome, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetErr(&errOut)
	rootCmd.SetArgs(append([]string{"decide", "--json", "--dry-run=false"}, args...))
	err := rootCmd.Execute()
	var o agent.Outcome
	if out.Len() > 0 {
		if jerr := json.Unmarshal(out.Bytes(), &o); jerr != nil {
			t.Fatalf("%v\n%s", jerr, out.String())
		}
	}
	return o, errOut.String(), err
}

// With an agent running (it holds the store), decide sends the command to
// it over MQTT and prints the trace it answers with.
func TestDecideForwardsToRunningAgent(t *testing.T) {
	path := writeDecideBoard(t, false, "")
	cfg, err := board.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, n)
	out, stderr, err := runDecide(t, "--board", path, "turn on the lamp")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "sending the command over MQTT") {
		t.Fatalf("not forwarded: %s", stderr)
	}
	if out.Decision == nil || out.Decision.Trace == nil || out.Decision.Trace.Path != "local" ||
		len(out.Steps) != 1 || out.Steps[0].Tool != "lamp.set" || !out.Steps[0].OK() {
		t.Fatalf("%+v", out)
	}
	// It ran in the agent, as the mqtt caller.
	if st := n.Tools.Stats()["lamp.set"]; st.Calls != 1 {
		t.Fatalf("the agent's lamp.set ran %d times", st.Calls)
	}
	// A refusal comes back with its trace, as an error.
	out, _, err = runDecide(t, "--board", path, "tell me a joke")
	if err == nil || out.Decision == nil || out.Decision.Trace == nil || out.Decision.Trace.Refusal == "" {
		t.Fatalf("%v %+v", err, out)
	}
}

// A command the local matcher answers is decided without waiting for the
// model server: here its preload never finishes (llm.timeout is 1h, and so
// is --wait), so a decide that waited for it would never return.
func TestDecideLocalDoesNotWaitForLLM(t *testing.T) {
	fake := ollamatest.Start(t, "tiny:latest")
	fake.OnRequest(func(ollamatest.Request) ollamatest.Answer { return ollamatest.Answer{Hang: true} })
	path := writeDecideBoard(t, true, fake.URL())
	out, stderr, err := runDecide(t, "--board", path, "--wait", "1h", "turn on the lamp")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if out.Decision == nil || out.Decision.Trace == nil || out.Decision.Trace.Path != "local" || out.Decision.Trace.LLMCalls != 0 ||
		len(out.Steps) != 1 || !out.Steps[0].OK() {
		t.Fatalf("%+v", out)
	}
	for _, r := range fake.Requests() {
		if r.Path == "/api/chat" {
			t.Fatal("the LLM was asked about a command the matcher answers")
		}
	}
}
