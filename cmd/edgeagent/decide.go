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
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/node"
)

func init() {
	var boardPath string
	var dryRun, asJSON bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "decide TEXT",
		Short: "Run one decision on a text command against the board and print its trace",
		Long: `Starts the board (sensors, actuators, the LLM), submits TEXT as a command from
the CLI and prints how the engine decided: path (local matcher or LLM),
scenario, intents, candidates with their scores, the steps and their results,
LLM calls with prompt and eval tokens, time per step.

With --dry-run the engine decides but nothing is run.`,
		Example: `  edgeagent decide "turn on the headlight"
  edgeagent decide --dry-run "it is getting dark, light the way"
  edgeagent decide --json "pan to 90 degrees" | jq .decision.trace`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := strings.TrimSpace(args[0])
			if text == "" {
				return errors.New("nothing to decide: TEXT is empty")
			}
			n, _, err := loadNode(boardPath, false)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- n.Run(runCtx, processStart) }()
			select {
			case <-n.Ready():
			case err := <-done:
				cancel()
				return err
			}
			out, derr := decideOnce(ctx, n, text, dryRun, wait)
			cancel()
			if err := <-done; err != nil && derr == nil {
				derr = err
			}
			if out.Decision == nil {
				return derr
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				printOutcome(cmd.OutOrStdout(), out)
			}
			return derr
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "decide but do not act")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome (decision, trace, steps) as JSON")
	cmd.Flags().DurationVar(&wait, "wait", 15*time.Second, "how long to wait for the LLM server to answer its first check")
	rootCmd.AddCommand(cmd)
}

// decideOnce waits for the LLM's first check, then decides (and acts,
// unless dryRun).
func decideOnce(ctx context.Context, n *node.Node, text string, dryRun bool, wait time.Duration) (agent.Outcome, error) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		st, ok := n.Agent.Status().Components["llm"].(local.Status)
		if !ok || st.State != local.StateStarting {
			break
		}
		select {
		case <-ctx.Done():
			return agent.Outcome{}, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	cmd := agent.Command{ID: "cli-decide", Caller: "cli", Text: text}
	if !dryRun {
		return n.Agent.Submit(ctx, cmd)
	}
	e := n.Engine()
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
