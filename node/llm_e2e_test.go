package node

// The decision engine against a real Ollama server; skipped unless
// EDGEAGENT_E2E_MODEL is set (see llm/local/e2e_test.go). A tiny
// random-weight model answers schema-valid nonsense, so what is asserted is
// that the agent acts only on validated parameters within the schema and
// the permissions, or refuses cleanly — never which tool it chose.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

const e2eBoard = `
data_dir: %DIR%
device: {id: e2e-bot, platform: sim}
agent: {heartbeat: 1h, cycle_timeout: 5m}
llm:
  enabled: true
  host: %HOST%
  model: %MODEL%
  embed_model: %MODEL%
  num_ctx: 4096
  timeout: 150s
  plan_below: %PLAN%
plugins:
  llm:
    max_tokens: 32
`

// strictTool checks what it receives on its own, independently of the
// registry: the engine must never hand it anything else.
type strictTool struct {
	spec  tools.Spec
	check func(p map[string]any) error
}

type e2eRig struct {
	*Node
	mu     sync.Mutex
	ran    []string
	broken []string
}

func newE2ENode(t *testing.T, planBelow float64) *e2eRig {
	t.Helper()
	model := os.Getenv("EDGEAGENT_E2E_MODEL")
	if model == "" {
		t.Skip("EDGEAGENT_E2E_MODEL is not set (eval \"$(../shared/tools/ollama/serve.sh)\" starts a server with a tiny model)")
	}
	dir := t.TempDir()
	yaml := strings.NewReplacer("%DIR%", dir, "%HOST%", os.Getenv("OLLAMA_HOST"), "%MODEL%", model,
		"%PLAN%", fmt.Sprint(planBelow)).Replace(e2eBoard)
	cfg, err := board.Parse("e2e.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	n, err := New(cfg, Options{Log: slog.New(slog.NewTextHandler(&logs, nil)), ConfigDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	r := &e2eRig{Node: n}
	num := func(p map[string]any, k string, lo, hi float64) error {
		v, ok := p[k].(float64)
		if !ok || v < lo || v > hi {
			return fmt.Errorf("%s=%v outside %g..%g", k, p[k], lo, hi)
		}
		return nil
	}
	for _, st := range []strictTool{
		{tools.Spec{Name: "lamp.set", Description: "Switch the lamp (the white LED at the front) on or off.", Permission: "actuate",
			Scenarios: []string{"navigation", "security"},
			Params:    json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"],"additionalProperties":false}`)},
			func(p map[string]any) error {
				if _, ok := p["on"].(bool); !ok || len(p) != 1 {
					return fmt.Errorf("bad lamp params %v", p)
				}
				return nil
			}},
		{tools.Spec{Name: "pan.set_angle", Description: "Turn the camera pan servo to an angle in degrees.", Permission: "actuate",
			Scenarios: []string{"navigation", "security"},
			Params:    json.RawMessage(`{"type":"object","properties":{"degrees":{"type":"number","minimum":0,"maximum":180}},"required":["degrees"],"additionalProperties":false}`)},
			func(p map[string]any) error { return num(p, "degrees", 0, 180) }},
		{tools.Spec{Name: "wheels.drive", Description: "Drive the wheels forward or backward at a speed from 0 to 1.", Permission: "actuate",
			Scenarios: []string{"navigation"},
			Params: json.RawMessage(`{"type":"object","properties":{"speed":{"type":"number","minimum":0,"maximum":1},` +
				`"direction":{"type":"string","enum":["forward","backward"],"default":"forward"}},"required":["speed"],"additionalProperties":false}`)},
			func(p map[string]any) error {
				if d := p["direction"]; d != "forward" && d != "backward" {
					return fmt.Errorf("direction %v", d)
				}
				return num(p, "speed", 0, 1)
			}},
		// Permission the llm caller is not granted: must never run.
		{tools.Spec{Name: "system.reboot", Description: "Reboot the robot: switch it off and on again.", Permission: "admin",
			Scenarios: []string{"maintenance"}},
			func(map[string]any) error { return errors.New("an admin tool ran for the LLM") }},
	} {
		st := st
		if err := n.Tools.Register("e2e", tools.Func(st.spec, func(_ context.Context, raw json.RawMessage) (tools.Result, error) {
			var p map[string]any
			err := json.Unmarshal(raw, &p)
			if err == nil {
				err = st.check(p)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			r.ran = append(r.ran, st.spec.Name+" "+string(raw))
			if err != nil {
				r.broken = append(r.broken, st.spec.Name+": "+err.Error())
			}
			return tools.Result{Value: "ok"}, err
		})); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func (r *e2eRig) waitAvailable(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, _ := r.Agent.Status().Components["llm"].(local.Status)
		if st.State == local.StateAvailable {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("LLM not available: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestE2EEngineActsOnlyOnValidatedAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		planBelow float64
		texts     []string
	}{
		// plan_below 0: the single-tool path (step 5's format is the
		// tool's own schema).
		{"params", 0.01, []string{"the lamp, it is dark here"}},
		// plan_below 1: always the planner (a DAG over the candidates).
		{"planner", 1, []string{"drive ahead slowly and light the lamp"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newE2ENode(t, tc.planBelow)
			stop := run(t, r.Node)
			defer stop()
			r.waitAvailable(t)
			for _, text := range tc.texts {
				start := time.Now()
				out, err := r.Agent.Submit(context.Background(), agent.Command{ID: "e2e", Caller: "cli", Text: text})
				var refusal *agent.RefusalError
				if err != nil && !errors.As(err, &refusal) {
					t.Fatalf("%q: %v (want an action or a clean refusal)", text, err)
				}
				if out.Decision == nil {
					t.Fatalf("%q: no decision", text)
				}
				tr := out.Decision.Trace
				if _, jerr := json.Marshal(tr); jerr != nil {
					t.Fatal(jerr)
				}
				if tr.LLMCalls == 0 || tr.LLMCalls > 3 || tr.PromptTokens == 0 {
					t.Fatalf("%q: %d LLM calls, %d prompt tokens", text, tr.LLMCalls, tr.PromptTokens)
				}
				for _, s := range out.Steps {
					if s.Code == tools.CodeInvalidParams || s.Code == tools.CodeForbidden || s.Code == tools.CodeNotFound {
						t.Fatalf("%q: an unvalidated step reached the registry: %+v", text, s)
					}
				}
				t.Logf("%q: %v, %d calls, %d+%d tokens, %.0f ms: %s", text, stepsOf(out), tr.LLMCalls, tr.PromptTokens, tr.EvalTokens,
					float64(time.Since(start).Milliseconds()), tr.Refusal)
			}
			r.mu.Lock()
			defer r.mu.Unlock()
			if len(r.broken) > 0 {
				t.Fatalf("tools got bad parameters: %v", r.broken)
			}
		})
	}
}

func stepsOf(out agent.Outcome) []string {
	var s []string
	for _, st := range out.Steps {
		s = append(s, st.Tool+string(st.Params))
	}
	return s
}

func TestE2EInterruptCancelsEngineCall(t *testing.T) {
	r := newE2ENode(t, 0.01)
	stop := run(t, r.Node)
	defer stop()
	r.waitAvailable(t)
	done := make(chan agent.Outcome, 1)
	go func() {
		out, _ := r.Agent.Submit(context.Background(), agent.Command{ID: "e2e", Caller: "cli", Text: "it is getting dark outside, light the way home"})
		done <- out
	}()
	time.Sleep(150 * time.Millisecond)
	start := time.Now()
	r.Raise(worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High})
	out := <-done
	if out.Preempted == "" {
		t.Skipf("the decision finished before the interrupt (%v)", out.Error)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("the preempted cycle took %v to stop", took)
	}
	// The interrupt may land in an LLM call (its error says so) or in the
	// embedding/matching step between calls (the trace's notes say so);
	// either way the engine stopped and nothing ran.
	tr := out.Decision.Trace
	inCall := len(tr.Calls) > 0 && strings.Contains(tr.Calls[len(tr.Calls)-1].Error, "preempted")
	inNotes := strings.Contains(strings.Join(tr.Notes, "\n"), "preempted by high front_cam/motion_start")
	if len(tr.Calls) == 0 || !(inCall || inNotes) || len(out.Steps) != 0 {
		t.Fatalf("%+v", tr)
	}
}
