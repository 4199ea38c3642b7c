package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/llm/llmtest"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

const llmBoard = `
data_dir: %DIR%
device: {id: test-bot, platform: sim}
agent: {heartbeat: 1h}
llm:
  enabled: %ENABLED%
  host: %HOST%
  model: tiny
  embed_model: %EMBED%
  timeout: 3s
plugins:
  mqtt: {enabled: false} # its broker would take 1883, which another test process may hold
  llm:
    skills:
      - {name: lamp, description: how to use the lamp, file: %DIR%/lamp.md, tools: ["lamp.*"]}
`

type llmNode struct {
	*Node
	log   *syncbuf.Buffer
	mu    sync.Mutex
	calls []string
	lamp  atomic.Bool
}

func newLLMNode(t testing.TB, enabled bool, host, embed string) *llmNode {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/lamp.md", []byte("The lamp is the white LED at the front. Switch it on when it is dark."), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := strings.NewReplacer("%DIR%", dir, "%ENABLED%", fmt.Sprint(enabled), "%HOST%", host, "%EMBED%", fmt.Sprintf("%q", embed)).Replace(llmBoard)
	cfg, err := board.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	ln := &llmNode{log: &syncbuf.Buffer{}}
	n, err := New(cfg, Options{Log: slog.New(slog.NewTextHandler(ln.log, &slog.HandlerOptions{Level: slog.LevelDebug})), ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ln.Node = n
	tool := func(name, desc, params string) {
		spec := tools.Spec{Name: name, Description: desc, Permission: "actuate", Scenarios: []string{"navigation"}, Params: json.RawMessage(params)}
		if err := n.Tools.Register("test", tools.Func(spec, func(_ context.Context, p json.RawMessage) (tools.Result, error) {
			ln.mu.Lock()
			ln.calls = append(ln.calls, name+" "+string(p))
			ln.mu.Unlock()
			if name == "lamp.set" {
				var v struct{ On bool }
				_ = json.Unmarshal(p, &v)
				ln.lamp.Store(v.On)
			}
			return tools.Result{Value: "ok"}, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	tool("lamp.set", "Switch the lamp (the white LED at the front) on or off.",
		`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`)
	tool("wheels.drive", "Drive the wheels forward or backward at a speed from 0 to 1.",
		`{"type":"object","properties":{"speed":{"type":"number","minimum":0,"maximum":1},"direction":{"type":"string","enum":["forward","backward"],"default":"forward"}},"required":["speed"],"additionalProperties":false}`)
	return ln
}

func (ln *llmNode) invoked() []string {
	ln.mu.Lock()
	defer ln.mu.Unlock()
	return append([]string(nil), ln.calls...)
}

func (ln *llmNode) llmState() string {
	st, ok := ln.Agent.Status().Components["llm"].(local.Status)
	if !ok {
		return ""
	}
	return st.State
}

// script is a fake model for the full stack: it recognises the engine's
// calls by their format schema, as a real model would only by content.
func script(intents map[string]string, params map[string]string) func(ollamatest.Request) ollamatest.Answer {
	req := regexp.MustCompile(`Request \([^)]*\): (.*)\n`)
	return func(r ollamatest.Request) ollamatest.Answer {
		if r.Chat == nil {
			return ollamatest.Answer{Status: 400, Error: "want chat"}
		}
		format := string(r.Chat.Format)
		last := r.Chat.Messages[len(r.Chat.Messages)-1].Content
		switch {
		case strings.Contains(format, `"scenario"`):
			m := req.FindStringSubmatch(last)
			if m == nil {
				return ollamatest.Answer{Content: "{}"}
			}
			return ollamatest.Answer{Content: intents[m[1]]}
		case strings.Contains(format, `"steps"`):
			names, _ := llmtest.PlanTools(r.Chat.Format)
			tool := names[0]
			return ollamatest.Answer{Content: fmt.Sprintf(`{"steps":[{"id":"1","tool":%q,"params":%s,"depends_on":[]}]}`, tool, params[tool])}
		}
		for tool, p := range params {
			if strings.Contains(r.Chat.Messages[1].Content, "for the tool "+tool+" ") {
				return ollamatest.Answer{Content: p}
			}
		}
		return ollamatest.Answer{Content: "{}"}
	}
}

func waitLLM(t *testing.T, ln *llmNode, state string) {
	t.Helper()
	waitFor(t, "llm "+state, func() bool { return ln.llmState() == state })
}

func TestLLMPluginDecidesThroughOllama(t *testing.T) {
	fake := ollamatest.Start(t, "tiny:latest", "all-minilm:latest")
	fake.OnRequest(script(
		map[string]string{"it is getting dark, light the way": `{"scenario":"navigation","intents":[{"action":"switch on","object":"lamp","constraints":["front"]}]}`},
		map[string]string{"lamp.set": `{"on":true}`, "wheels.drive": `{"speed":0.2}`}))
	ln := newLLMNode(t, true, fake.URL(), "all-minilm")
	stop := run(t, ln.Node)
	defer stop()
	waitLLM(t, ln, local.StateAvailable)

	out, err := ln.Agent.Submit(context.Background(), agent.Command{ID: "c1", Caller: "cli", Text: "it is getting dark, light the way"})
	if err != nil {
		t.Fatalf("%v\n%s", err, ln.log.String())
	}
	if !ln.lamp.Load() || len(out.Steps) != 1 || out.Steps[0].Tool != "lamp.set" {
		t.Fatalf("%+v %v", out, ln.invoked())
	}
	tr := out.Decision.Trace
	if tr.Path != "llm" || tr.LLMCalls != 2 || tr.PromptTokens == 0 || tr.EvalTokens == 0 || tr.Embedder != "all-minilm" {
		t.Fatalf("trace %+v", tr)
	}
	// The lamp guide is not inline: given with the request that offers lamp.set.
	var sawGuide bool
	numCtx := map[any]bool{}
	for _, r := range fake.Requests() {
		if r.Chat != nil {
			sawGuide = sawGuide || strings.Contains(r.Chat.Messages[1].Content, "Switch it on when it is dark.")
			numCtx[r.Chat.Options["num_ctx"]] = true
		}
		if r.Generate != nil {
			numCtx[r.Generate.Options["num_ctx"]] = true
		}
	}
	if !sawGuide || len(numCtx) != 1 {
		t.Fatalf("guide %v, num_ctx values %v", sawGuide, numCtx)
	}
	// Decisions are recorded in the world model with their trace.
	evs := ln.World.Events(0, worldmodel.Low, 100)
	if evs[len(evs)-1].Kind != "decision" || evs[len(evs)-1].Data["trace"] == nil {
		t.Fatalf("%+v", evs[len(evs)-1])
	}
	// The one stream carries each exchange in full and the tool call.
	var llmRecs, lampCalls int
	for _, rec := range ln.World.Records(0, 0) {
		switch {
		case rec.Kind == "llm" && strings.Contains(string(rec.Data), `"answer":"{`) && strings.Contains(string(rec.Data), "it is getting dark"):
			llmRecs++
		case rec.Kind == "tool_call" && rec.Source == "lamp.set" && strings.Contains(string(rec.Data), `"params":{"on":true}`):
			lampCalls++
		}
	}
	if llmRecs != 2 || lampCalls != 1 {
		t.Fatalf("journal: %d llm exchanges (want 2), %d lamp.set calls (want 1): %+v", llmRecs, lampCalls, ln.World.Records(0, 0))
	}
	// Plain commands need no LLM.
	before := len(fake.Requests())
	if _, err := ln.Agent.Submit(context.Background(), agent.Command{ID: "c2", Caller: "cli", Text: "lamp off"}); err != nil || ln.lamp.Load() {
		t.Fatalf("%v", err)
	}
	if len(fake.Requests()) != before {
		t.Fatal("the local matcher called the LLM")
	}
	// The embeddings of the tool descriptions are in the store.
	n := 0
	_ = ln.Store.ForEach(agent.EmbeddingBucket, func(string, json.RawMessage) error { n++; return nil })
	if n < 2 {
		t.Fatalf("%d cached embeddings", n)
	}
}

func TestLLMDisabledDeclinesAndMatcherServes(t *testing.T) {
	ln := newLLMNode(t, false, "", "")
	if !strings.Contains(ln.log.String(), `plugin=llm reason="llm.enabled is false`) {
		t.Fatalf("no logged reason:\n%s", ln.log.String())
	}
	stop := run(t, ln.Node)
	defer stop()
	if _, err := ln.Agent.Submit(context.Background(), agent.Command{ID: "c", Caller: "cli", Text: "turn on the lamp"}); err != nil || !ln.lamp.Load() {
		t.Fatalf("%v", err)
	}
	_, err := ln.Agent.Submit(context.Background(), agent.Command{ID: "c", Caller: "cli", Text: "it is getting dark, light the way"})
	if err == nil || !strings.Contains(err.Error(), "no LLM is configured") {
		t.Fatalf("%v", err)
	}
}

func TestOllamaDownAtStartThenBack(t *testing.T) {
	fake := ollamatest.Start(t, "tiny:latest")
	fake.OnRequest(script(
		map[string]string{"light the way": `{"scenario":"navigation","intents":[{"action":"switch on","object":"lamp","constraints":[]}]}`},
		map[string]string{"lamp.set": `{"on":true}`}))
	fake.Stop()
	ln := newLLMNode(t, true, fake.URL(), "")
	stop := run(t, ln.Node)
	defer stop()
	waitLLM(t, ln, local.StateUnavailable)

	// The fast paths keep working.
	start := time.Now()
	if _, err := ln.Agent.Submit(context.Background(), agent.Command{ID: "a", Caller: "cli", Text: "switch the lamp on"}); err != nil || !ln.lamp.Load() {
		t.Fatalf("%v", err)
	}
	_, err := ln.Agent.Submit(context.Background(), agent.Command{ID: "b", Caller: "cli", Text: "light the way"})
	if err == nil || !strings.Contains(err.Error(), "LLM is unavailable") || time.Since(start) > time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	ln.lamp.Store(false)
	if err := fake.Restart(); err != nil {
		t.Fatal(err)
	}
	waitLLM(t, ln, local.StateAvailable)
	if _, err := ln.Agent.Submit(context.Background(), agent.Command{ID: "c", Caller: "cli", Text: "light the way"}); err != nil || !ln.lamp.Load() {
		t.Fatalf("%v\n%s", err, ln.log.String())
	}
}

func TestInterruptCancelsOllamaCall(t *testing.T) {
	fake := ollamatest.Start(t, "tiny:latest")
	ln := newLLMNode(t, true, fake.URL(), "")
	stop := run(t, ln.Node)
	defer stop()
	waitLLM(t, ln, local.StateAvailable)
	fake.Push(ollamatest.Answer{Hang: true})
	done := make(chan agent.Outcome, 1)
	go func() {
		out, _ := ln.Agent.Submit(context.Background(), agent.Command{ID: "c", Caller: "cli", Text: "light the way home"})
		done <- out
	}()
	waitFor(t, "the chat request", func() bool { return fake.InFlight() == 1 })
	ln.Raise(worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High})
	fake.WaitGone(t, "/api/chat")
	out := <-done
	var pe *agent.PreemptedError
	if out.Preempted == "" || !errors.As(out.Err, &pe) || len(ln.invoked()) != 0 {
		t.Fatalf("%+v", out)
	}
}
