package eval_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/eval"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/llmtest"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// cacheSlotRE is the debug line Ollama's runner logs for every prompt: how
// many of its tokens came from the KV cache (used) and how many it had to
// evaluate (remaining). Ollama 0.17's prompt_eval_count counts the whole
// prompt whether cached or not, so this line is where reuse shows.
var cacheSlotRE = regexp.MustCompile(`msg="loading cache slot".* prompt=(\d+) used=(\d+) remaining=(\d+)`)

// TestPromptCacheE2E runs 20 consecutive LLM decisions on the sim board
// against a real Ollama server and reports what share of the prompt tokens
// the server had to evaluate (the rest came from its KV cache). It needs
// the server started with OLLAMA_DEBUG=1 and its log in OLLAMA_SERVE_LOG:
//
//	eval "$(OLLAMA_DEBUG=1 ../shared/tools/ollama/serve.sh)"
//	go test ./eval -run PromptCacheE2E -v
//
// Budget (issue 16): evaluated ≤ 40 % of the prompt tokens sent, ≤ 2 LLM
// calls per decision.
func TestPromptCacheE2E(t *testing.T) {
	host, logPath := eval.E2EServer()
	model := os.Getenv("EDGEAGENT_E2E_MODEL")
	if model == "" || logPath == "" {
		t.Skip("needs a real Ollama server started with OLLAMA_DEBUG=1: set EDGEAGENT_E2E_MODEL and OLLAMA_SERVE_LOG (../shared/tools/ollama/serve.sh)")
	}
	cfg, err := board.Load("../board-configs/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg.LLM.Model, cfg.LLM.EmbedModel, cfg.LLM.Host = model, "", host
	// The tiny test model reads one token per byte in a context of 4096
	// (a real model reads three to four bytes per token): a shorter world
	// summary and three candidates per plan keep every prompt whole, since
	// a truncated prompt would defeat the cache and the measurement.
	const summaryBytes, topK = 512, 3
	for i := range cfg.Sensors {
		cfg.Sensors[i].Enabled = false // the test seeds the world itself
	}
	log := slog.New(slog.DiscardHandler)
	n, err := node.New(cfg, node.Options{Log: log, ConfigDir: "../board-configs", NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	client, err := local.New(local.Options{Host: cfg.LLM.Host, Model: model, NumCtx: cfg.LLM.NumCtx, KeepAlive: cfg.LLM.KeepAlive,
		Timeout: 2 * time.Minute, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// The engine of the sim board on the real server. MaxTokens is small:
	// the random model's answers are replaced anyway (see steered).
	e, err := agent.NewEngine(agent.EngineConfig{Device: cfg.Device.ID, Scenarios: cfg.LLM.Scenarios,
		MaxTokens: 8, SummaryBytes: summaryBytes, TopK: topK, Log: log}, steered{client}, n.Tools, n.World, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		src   string
		value float64
		unit  string
	}{{"env.temperature", 23.1, "°C"}, {"env.humidity", 45, "%"}, {"env.pressure", 1013.2, "hPa"}, {"light.illuminance", 420, "lx"},
		{"power.battery", 12.4, "V"}, {"supply.current", 0.8, "A"}, {"air.co2", 650, "ppm"}, {"front_range.distance", 2, "m"}} {
		n.World.Append(worldmodel.Observation{Source: s.src, Kind: worldmodel.Reading, Value: s.value, Unit: s.unit})
	}
	texts := make([]string, 0, len(steeredIntents))
	for text := range steeredIntents {
		texts = append(texts, text)
	}
	sort.Strings(texts)
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	logLines := bufio.NewReader(f)
	var sent, evaluated, apiPrompt, calls, decisions int
	for i := range 20 {
		// The world moves on between decisions, as sensors report.
		n.World.Append(worldmodel.Observation{Source: "light.illuminance", Kind: worldmodel.Reading, Value: 420 - 20*float64(i), Unit: "lx"})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := &agent.Command{ID: strconv.Itoa(i), Caller: "cli", Text: texts[i%len(texts)]}
		dec, err := e.Decide(ctx, agent.Perception{Trigger: "command", Command: cmd, Summary: n.World.Summary(summaryBytes)})
		cancel()
		tr := dec.Trace
		if err != nil {
			t.Fatalf("decision %d: %v\n%+v", i, err, tr)
		}
		if tr == nil || tr.LLMCalls == 0 {
			t.Fatalf("decision %d made no LLM call", i)
		}
		if tr.LLMCalls > 2 {
			t.Errorf("decision %d: %d LLM calls", i, tr.LLMCalls)
		}
		decisions++
		calls += tr.LLMCalls
		apiPrompt += tr.PromptTokens
		for {
			line, err := logLines.ReadString('\n')
			if m := cacheSlotRE.FindStringSubmatch(line); m != nil {
				p, _ := strconv.Atoi(m[1])
				r, _ := strconv.Atoi(m[3])
				if p >= cfg.LLM.NumCtx {
					// The runner cut the prompt's middle, and with it the
					// prefix the next prompt would share.
					t.Fatalf("decision %d: a prompt of %d tokens filled the context of %d: the measurement needs whole prompts", i, p, cfg.LLM.NumCtx)
				}
				sent += p
				evaluated += r
			}
			if err != nil {
				break
			}
		}
		// Without debug logging there is nothing to measure: say so after
		// the first decision rather than after all twenty.
		if sent == 0 {
			t.Fatal("no cache-slot lines in the server log: start the server with OLLAMA_DEBUG=1")
		}
	}
	share := float64(evaluated) / float64(sent)
	t.Logf("%d decisions, %d LLM calls: prompt tokens sent %d (prompt_eval_count sum %d), evaluated %d = %.1f %%",
		decisions, calls, sent, apiPrompt, evaluated, 100*share)
	fmt.Printf("PROMPTCACHE decisions=%d calls=%d sent=%d prompt_eval_count=%d evaluated=%d share=%.3f\n",
		decisions, calls, sent, apiPrompt, evaluated, share)
	if share > 0.40 {
		t.Errorf("%.1f %% of the prompt tokens evaluated, budget 40 %%", 100*share)
	}
}

// steered is the real Ollama client whose answers are replaced by what a
// capable model would say (the tiny model's weights are random): the server
// reads every prompt for real — which is what is measured — and the
// decisions take a capable model's path, classification then parameters
// or a plan, instead of stopping at a meaningless classification.
type steered struct{ c *local.Client }

var (
	steeredIntents = map[string]string{
		"it is getting dark in here":          `{"scenario":"navigation","intents":[{"action":"switch on","object":"headlight","constraints":[]}]}`,
		"look over to the left side":          `{"scenario":"security","intents":[{"action":"turn","object":"pan servo angle","constraints":["left"]}]}`,
		"could you cool things down a bit":    `{"scenario":"environment","intents":[{"action":"set","object":"fan duty","constraints":["cooler"]}]}`,
		"make some noise to scare the cat":    `{"scenario":"interaction","intents":[{"action":"beep","object":"horn buzzer","constraints":[]}]}`,
		"water the plants for a minute":       `{"scenario":"maintenance","intents":[{"action":"switch on","object":"pump relay","constraints":["60 seconds"]}]}`,
		"creep forward slowly":                `{"scenario":"navigation","intents":[{"action":"run","object":"drive motor forward","constraints":["slow speed"]}]}`,
		"it's too hot, do something":          `{"scenario":"environment","intents":[{"action":"set","object":"fan duty","constraints":["full"]}]}`,
		"signal that you heard me":            `{"scenario":"interaction","intents":[{"action":"beep","object":"horn","constraints":["twice"]}]}`,
		"point the camera straight ahead":     `{"scenario":"security","intents":[{"action":"turn","object":"pan servo angle","constraints":["90 degrees"]}]}`,
		"switch the headlight off in a while": `{"scenario":"navigation","intents":[{"action":"switch on","object":"headlight","constraints":["duration 30 seconds"]}]}`,
	}
	steeredParams = map[string]string{
		"headlight.set": `{"on":true}`, "pan.set_angle": `{"degrees":30}`, "pan.move_by": `{"degrees":-45}`, "fan.set": `{"duty":0.8}`,
		"horn.beep": `{"count":2}`, "horn.set": `{"on":true,"duration":1}`, "pump.set": `{"on":true,"duration":60}`,
		"drive.drive": `{"speed":0.2}`, "fan.off": `{}`, "pan.stop": `{}`, "drive.stop": `{}`, "camera.snapshot": `{}`,
		"estop.trigger": `{}`, "mqtt.publish": `{"topic":"edgeagent/sim-bot/notes/x","payload":"hi"}`, "agent.status": `{}`,
		"tools.stats": `{}`, "estop.status": `{}`, "audit.query": `{}`, "estop.reset": `{}`,
	}
	requestRE = regexp.MustCompile(`Request \([^)]*\): (.*)\n`)
	paramsRE  = regexp.MustCompile(`Task: params for the tool (\S+) `)
)

func (s steered) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := s.c.Generate(ctx, req)
	if err != nil && !errors.Is(err, llm.ErrTruncated) {
		return resp, err
	}
	last := req.Messages[len(req.Messages)-1].Content
	switch req.Purpose {
	case "classify":
		if m := requestRE.FindStringSubmatch(last); m != nil {
			resp.Content = steeredIntents[m[1]]
		}
	case "params":
		if m := paramsRE.FindStringSubmatch(last); m != nil {
			resp.Content = steeredParams[m[1]]
		}
	case "plan":
		if names, _ := llmtest.PlanTools(req.Schema); len(names) > 0 {
			tool := names[0]
			resp.Content = fmt.Sprintf(`{"steps":[{"id":"1","tool":%q,"params":%s,"depends_on":[]}]}`, tool, steeredParams[tool])
		}
	}
	return resp, nil
}

func (s steered) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return s.c.Embed(ctx, texts)
}
