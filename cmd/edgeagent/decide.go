package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/store"
)

func init() {
	var boardPath string
	var dryRun, asJSON, withSensors bool
	var wait, timeout time.Duration
	cmd := &cobra.Command{
		Use:   "decide TEXT",
		Short: "Run one decision on a text command against the board and print its trace",
		Long: `Submits TEXT as a command and prints how the engine decided: path (local
matcher or LLM), scenario, intents, candidates with their scores, the steps
and their results, LLM calls with prompt and eval tokens, time per step.

When an agent already runs with this board (it holds the store), the command
is sent to it over MQTT and the trace it answers with is printed; the agent
applies the mqtt caller's permissions (permissions.mqtt). Otherwise the board
is started here without its sensors (so a simulated camera cannot preempt the
decision; --sensors runs them) and without MQTT. A command the local matcher
answers is decided at once; only one that needs the LLM waits (up to --wait)
for the model server's first check.

With --dry-run the engine decides but nothing is run (never forwarded: the
decision is made here, on a copy without the store's history).`,
		Example: `  edgeagent decide "turn on the headlight"
  edgeagent decide --dry-run "it is getting dark, light the way"
  edgeagent decide --json "pan to 90 degrees" | jq .decision.trace`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := strings.TrimSpace(args[0])
			if text == "" {
				return errors.New("nothing to decide: TEXT is empty")
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			adjust := func(cfg *board.Config) {
				if !withSensors {
					for i := range cfg.Sensors {
						cfg.Sensors[i].Enabled = false
					}
				}
			}
			n, _, err := loadNode(boardPath, false, adjust)
			if errors.Is(err, store.ErrLocked) {
				if !dryRun {
					out, ferr := decideOverMQTT(ctx, cmd, boardPath, text, timeout)
					return report(cmd, out, ferr, asJSON)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "edgeagent: an agent is running with %s; deciding here without its store (a dry run is not forwarded)\n", boardPath)
				n, _, err = loadNode(boardPath, true, adjust)
			}
			if err != nil {
				return err
			}
			var out agent.Outcome
			err = runOnce(ctx, n, func(ctx context.Context) (err error) {
				out, err = decideOnce(ctx, n, text, dryRun, wait)
				return err
			})
			return report(cmd, out, err, asJSON)
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "decide but do not act")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome (decision, trace, steps) as JSON")
	cmd.Flags().BoolVar(&withSensors, "sensors", false, "run the board's sensors while deciding (their events may preempt the decision)")
	cmd.Flags().DurationVar(&wait, "wait", 15*time.Second, "how long a command that needs the LLM waits for the model server's first check")
	cmd.Flags().DurationVar(&timeout, "timeout", 60*time.Second, "when forwarding to a running agent over MQTT, how long to wait for the reply")
	rootCmd.AddCommand(cmd)
}

// report prints an outcome (when there is a decision to show) and returns
// the error of the decision.
func report(cmd *cobra.Command, out agent.Outcome, err error, asJSON bool) error {
	if out.Decision == nil {
		return err
	}
	if asJSON {
		if jerr := writeJSON(cmd.OutOrStdout(), out); jerr != nil {
			return jerr
		}
	} else {
		printOutcome(cmd.OutOrStdout(), out)
	}
	return err
}

// decideOverMQTT sends the command to the agent that runs with the board
// and returns the outcome it answers with.
func decideOverMQTT(ctx context.Context, cmd *cobra.Command, path, text string, timeout time.Duration) (agent.Outcome, error) {
	r, err := callOverMQTT(ctx, cmd, path, "command", mqtt.Command{Text: text}, false, timeout)
	if err != nil {
		return agent.Outcome{}, err
	}
	var out agent.Outcome
	if r.Result != nil {
		// The reply carries the outcome as JSON: decode it back.
		raw, err := json.Marshal(r.Result)
		if err == nil {
			err = json.Unmarshal(raw, &out)
		}
		if err != nil {
			return agent.Outcome{}, fmt.Errorf("the agent's reply is not an outcome: %w", err)
		}
	}
	if !r.OK {
		return out, errors.New(r.Error + " (" + r.Code + ")")
	}
	return out, nil
}

// decideOnce decides (and acts, unless dryRun). A command the local
// matcher answers goes at once; one that needs the LLM first waits for the
// model server's first check, up to wait.
func decideOnce(ctx context.Context, n *node.Node, text string, dryRun bool, wait time.Duration) (agent.Outcome, error) {
	e := n.Engine()
	if e != nil && !e.Local(text) {
		if err := waitForLLM(ctx, n, wait); err != nil {
			return agent.Outcome{}, err
		}
	}
	cmd := agent.Command{ID: "cli-decide", Caller: "cli", Text: text}
	if !dryRun {
		return n.Agent.Submit(ctx, cmd)
	}
	if e == nil {
		return agent.Outcome{}, errors.New("no decision engine is loaded on this board")
	}
	plan := hooks.Plan{Perception: fmt.Sprintf("command cli-decide %q", text)}
	if err := n.Hooks.BeforePlan(ctx, &plan); err != nil {
		n.Log.Warn("before_plan", "err", err)
	}
	start := time.Now()
	dec, err := e.Decide(ctx, agent.Perception{Trigger: "command", Command: &cmd, Context: plan.Context,
		Summary: n.World.Summary(n.Board.LLM.SummaryBytes)})
	out := agent.Outcome{Trigger: "command cli-decide (dry run)", Duration: time.Since(start), Err: err}
	if dec.Path != "" {
		out.Decision = &dec
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out, err
}

// waitForLLM waits until the LLM client has finished its first check of
// the server (available or not), at most wait.
func waitForLLM(ctx context.Context, n *node.Node, wait time.Duration) error {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		st, ok := n.Agent.Status().Components["llm"].(local.Status)
		if !ok || st.State != local.StateStarting {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
	}
}

func printOutcome(w io.Writer, out agent.Outcome) {
	dec := out.Decision
	tr := dec.Trace
	if tr == nil {
		fmt.Fprintf(w, "path: %s (no trace)\n", dec.Path)
	} else {
		fmt.Fprintf(w, "perception:  %s\n", tr.Perception)
		fmt.Fprintf(w, "path:        %s", tr.Path)
		if tr.Scenario != "" {
			fmt.Fprintf(w, "   scenario: %s", tr.Scenario)
		}
		fmt.Fprintf(w, "   confidence: %.2f\n", tr.Confidence)
		for _, in := range tr.Intents {
			if s := strings.TrimSpace(in.String()); s != "" {
				fmt.Fprintf(w, "intent:      %s\n", s)
			}
		}
		if len(tr.Candidates) > 0 {
			fmt.Fprintf(w, "candidates (embedder %s):\n", tr.Embedder)
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "  TOOL\tSCORE\tSEMANTIC\tHISTORY\tPERMISSION\tCONTEXT")
			for _, c := range tr.Candidates {
				fmt.Fprintf(tw, "  %s\t%.3f\t%.3f\t%.3f\t%.0f\t%.3f\n", c.Tool, c.Score, c.Semantic, c.History, c.Permission, c.Context)
			}
			tw.Flush()
		}
		for _, note := range tr.Notes {
			fmt.Fprintf(w, "note:        %s\n", note)
		}
		if tr.Refusal != "" {
			fmt.Fprintf(w, "refused:     %s\n", tr.Refusal)
		}
		if tr.LLMCalls > 0 || tr.EmbedCalls > 0 {
			fmt.Fprintf(w, "llm calls:   %d (prompt %d bytes, %d tokens; answers %d tokens); embedding calls: %d\n",
				tr.LLMCalls, tr.PromptBytes, tr.PromptTokens, tr.EvalTokens, tr.EmbedCalls)
			for _, c := range tr.Calls {
				fmt.Fprintf(w, "  %-9s %6d bytes %5d+%-4d tokens %8.1f ms", c.Purpose, c.PromptBytes, c.PromptTokens, c.EvalTokens, c.MS)
				if c.LoadMS > 0 {
					fmt.Fprintf(w, " (load %.1f ms)", c.LoadMS)
				}
				if c.Error != "" {
					fmt.Fprintf(w, " error: %s", c.Error)
				}
				fmt.Fprintln(w)
			}
		}
		var times []string
		for _, t := range tr.Timings {
			times = append(times, fmt.Sprintf("%s %.2f", t.Step, t.MS))
		}
		fmt.Fprintf(w, "time (ms):   %s; total %.2f\n", strings.Join(times, ", "), tr.TotalMS)
	}
	fmt.Fprintln(w, "steps:")
	if len(dec.Steps) == 0 {
		fmt.Fprintln(w, "  (none)")
	}
	results := map[string]agent.StepResult{}
	for _, r := range out.Steps {
		results[r.ID] = r
	}
	for _, s := range dec.Steps {
		fmt.Fprintf(w, "  %s %s %s", s.ID, s.Tool, s.Params)
		if len(s.DependsOn) > 0 {
			fmt.Fprintf(w, " after %s", strings.Join(s.DependsOn, ","))
		}
		if r, ok := results[s.ID]; ok {
			switch {
			case r.OK():
				v, _ := json.Marshal(r.Result)
				fmt.Fprintf(w, " → ok %s", v)
			default:
				fmt.Fprintf(w, " → %s", r.Error)
			}
		}
		fmt.Fprintln(w)
	}
	if out.Error != "" {
		fmt.Fprintf(w, "error:       %s\n", out.Error)
	}
}
