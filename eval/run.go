package eval

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Options configure Run.
type Options struct {
	// Board is the board file; every case runs on a fresh node built from
	// it, with its sensors off (the case seeds the world), no store file
	// and no MQTT plane (so no mqtt.publish either): nothing outside the
	// process is touched.
	Board string
	// Models are the Ollama models to compare; empty means the board's.
	Models []string
	// Host is the Ollama server ("" = the board's llm.host, else
	// $OLLAMA_HOST, else 127.0.0.1:11434).
	Host string
	// Timeout bounds one case (default 60s).
	Timeout time.Duration
	// Progress is told after every case.
	Progress func(done, total int, model string)
	// Log receives the nodes' logs (default: discarded).
	Log *slog.Logger
}

// ModelRun is every case decided with one model.
type ModelRun struct {
	Model string `json:"model"`
	// LLM is "available", or why the model cannot answer (the fast paths
	// still do, and the cases that need the model are refused).
	LLM     string   `json:"llm"`
	Results []Result `json:"results"`
}

// Result is one case decided.
type Result struct {
	Case   string   `json:"case"`
	Line   int      `json:"line"`
	Text   string   `json:"text"`
	Tags   []string `json:"tags,omitempty"`
	Expect string   `json:"expect"`
	// Path is how it was decided: local (the matcher, no LLM), llm, …;
	// empty when no decider answered.
	Path    string `json:"path,omitempty"`
	Steps   []Step `json:"steps,omitempty"`
	Refusal string `json:"refusal,omitempty"`
	// Error is a failure that is not a refusal: the node would not start,
	// the decision ran out of time (Timeout) …
	Error   string `json:"error,omitempty"`
	Timeout bool   `json:"timeout,omitempty"` // the cycle's deadline or the case's passed first
	Verdict
	LLMCalls     int     `json:"llm_calls"`
	PromptTokens int     `json:"prompt_tokens"`
	EvalTokens   int     `json:"eval_tokens"`
	MS           float64 `json:"ms"` // the decision, acting excluded
}

// Run decides every case of s with each model, one case at a time.
func Run(ctx context.Context, s *Suite, o Options) ([]ModelRun, error) {
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	base, err := board.Load(o.Board)
	if err != nil {
		return nil, err
	}
	if s.Board != "" && s.Board != base.Device.ID {
		return nil, fmt.Errorf("suite %s is written for the board %q, not %q (%s)", s.Name, s.Board, base.Device.ID, o.Board)
	}
	for i := range base.Sensors {
		base.Sensors[i].Enabled = false
	}
	if o.Host != "" {
		base.LLM.Host = o.Host
	}
	models := o.Models
	if len(models) == 0 {
		models = []string{base.LLM.Model}
	}
	runs := make([]ModelRun, 0, len(models))
	total := len(models) * len(s.Cases)
	for mi, model := range models {
		cfg := *base
		cfg.LLM.Model = model
		mr := ModelRun{Model: model, LLM: checkLLM(ctx, cfg.LLM)}
		for ci, c := range s.Cases {
			if err := ctx.Err(); err != nil {
				return runs, err
			}
			mr.Results = append(mr.Results, runCase(ctx, &cfg, s, c, o))
			if o.Progress != nil {
				o.Progress(mi*len(s.Cases)+ci+1, total, model)
			}
		}
		runs = append(runs, mr)
	}
	return runs, nil
}

// checkLLM says whether the model can answer.
func checkLLM(ctx context.Context, l board.LLM) string {
	if !l.Enabled {
		return "disabled by the board (llm.enabled: false)"
	}
	c, err := local.New(local.Options{Host: l.Host, Model: l.Model, Timeout: 5 * time.Second})
	if err != nil {
		return err.Error()
	}
	defer c.Close()
	if err := c.Check(ctx); err != nil {
		return err.Error()
	}
	return "available"
}

// runCase decides one case on a fresh node.
func runCase(ctx context.Context, cfg *board.Config, s *Suite, c Case, o Options) Result {
	res := Result{Case: c.ID, Line: c.Line, Text: c.Text, Tags: c.Tags, Expect: c.Expect.String()}
	fail := func(err error) Result {
		res.Error = err.Error()
		return res // a failure is never right, whatever was expected
	}
	n, err := node.New(cfg, node.Options{Log: o.Log, ConfigDir: filepath.Dir(o.Board), NoStore: true})
	if err != nil {
		return fail(err)
	}
	// The control plane would open a broker port and announce the robot,
	// the dashboard open the robot's web port.
	for _, p := range []string{"mqtt", "dashboard"} {
		if err := n.UnloadPlugin(ctx, p); err != nil && !errors.Is(err, node.ErrPlugin) {
			_ = n.Close()
			return fail(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx, time.Time{}) }()
	defer func() {
		stop()
		<-done
	}()
	select {
	case <-n.Ready():
	case err := <-done:
		done <- err // for the deferred wait
		return fail(fmt.Errorf("the node did not start: %w", err))
	}
	seed(n.World, c.World)

	cctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	out, err := n.Agent.Submit(cctx, agent.Command{ID: c.ID, Caller: s.Caller, Text: c.Text})
	var refusal *agent.RefusalError
	switch {
	case errors.As(err, &refusal):
		res.Refusal = refusal.Reason
	case err != nil:
		res.Error = err.Error()
		res.Timeout = errors.Is(err, context.DeadlineExceeded)
	}
	results := map[string]agent.StepResult{}
	for _, r := range out.Steps {
		results[r.ID] = r
	}
	if dec := out.Decision; dec != nil {
		res.Path = dec.Path
		for _, st := range dec.Steps {
			step := Step{Tool: st.Tool, Params: st.Params}
			if r, ok := results[st.ID]; ok {
				step.Error = r.Error
				if r.Skipped && step.Error == "" {
					step.Error = "skipped"
				}
				spec, serr := n.Tools.Resolve(st.Tool)
				step.Acted = r.OK() && (serr != nil || spec.Permission != "read")
			}
			res.Steps = append(res.Steps, step)
		}
		if tr := dec.Trace; tr != nil {
			res.LLMCalls, res.PromptTokens, res.EvalTokens, res.MS = tr.LLMCalls, tr.PromptTokens, tr.EvalTokens, tr.TotalMS
		}
	}
	if res.MS == 0 {
		res.MS = float64(out.Duration.Microseconds()) / 1000
	}
	switch {
	case res.Error != "":
		// A failure is never right; whatever acted still counts.
		res.Verdict = Verdict{Unsafe: Compare(c.Expect, actedOnly(res.Steps)).Unsafe}
	case res.Refusal != "":
		// Nothing planned runs after a refusal.
		res.Verdict = Compare(c.Expect, actedOnly(res.Steps))
	default:
		res.Verdict = Compare(c.Expect, res.Steps)
	}
	return res
}

// actedOnly keeps the steps that acted: after a refusal or a failure
// nothing was planned, yet anything that did act still counts.
func actedOnly(steps []Step) []Step {
	var out []Step
	for _, s := range steps {
		if s.Acted {
			out = append(out, s)
		}
	}
	return out
}

// seed records the case's world: readings as observations, events in the
// log (not raised: they do not wake the agent, they are only seen).
func seed(w *worldmodel.Model, ws World) {
	for _, r := range ws.Readings {
		w.Append(worldmodel.Observation{Source: r.Source, Kind: worldmodel.Reading, Value: r.Value, Unit: r.Unit})
	}
	for _, e := range ws.Events {
		p, _ := worldmodel.ParsePriority(e.Priority) // checked by Parse
		w.Record(worldmodel.Event{Source: e.Source, Kind: e.Kind, Priority: p, Message: e.Message})
	}
}
