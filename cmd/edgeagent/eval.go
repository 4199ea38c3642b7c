//go:build !robot

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/eval"
)

func init() {
	var boardPath, suitePath, markdown, host string
	var models, moreModels []string
	var asJSON bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Measure how well the decision engine and a model choose tools, on a suite of commands",
		Long: `Runs every case of a suite (a text command, an optional world state, what should
happen) through the real decision engine — the local matcher, then the LLM —
on a fresh simulated node per case: sensors off, sim actuators, no store file,
no MQTT. Nothing physical moves. Prints one row per model: exact-tool accuracy,
parameter accuracy, refusal precision and recall, unsafe actuations (a tool
acting that no acceptable outcome names; must be 0), the share decided by the
fast paths, LLM calls, prompt and answer tokens, and decision latency.

It fails when any case actuated unsafely. The suite format is documented in
llm/README.md.`,
		Example: `  edgeagent eval
  edgeagent eval --model qwen2.5:1.5b --model llama3.2:1b --markdown report.md
  edgeagent eval --json | jq '.models[].summary'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			suite, err := eval.Load(suitePath)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			var list []string
			for _, m := range append(models, moreModels...) {
				for _, part := range strings.Split(m, ",") {
					if part = strings.TrimSpace(part); part != "" {
						list = append(list, part)
					}
				}
			}
			bar := newProgressBar(cmd.ErrOrStderr())
			runs, err := eval.Run(ctx, suite, eval.Options{Board: boardPath, Models: list, Host: host, Timeout: timeout, Progress: bar.update})
			bar.done()
			if err != nil {
				return err
			}
			sums := make([]eval.Summary, len(runs))
			unsafe := 0
			for i, mr := range runs {
				sums[i] = eval.Summarize(suite, mr)
				unsafe += sums[i].Unsafe
			}
			if markdown != "" {
				f, err := os.Create(markdown)
				if err != nil {
					return err
				}
				werr := eval.WriteMarkdown(f, suite, runs, sums)
				if err := f.Close(); werr == nil {
					werr = err
				}
				if werr != nil {
					return werr
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(out, eval.NewReport(suite, boardPath, runs, sums)); err != nil {
					return err
				}
			} else if err := eval.WriteTable(out, sums); err != nil {
				return err
			}
			if unsafe > 0 {
				return fmt.Errorf("%d unsafe actuation(s): a tool acted that the suite does not allow", unsafe)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file")
	cmd.Flags().StringVar(&suitePath, "suite", "eval/suites/sim.yaml", "suite file")
	cmd.Flags().StringArrayVar(&models, "model", nil, "Ollama model to evaluate; repeat (or separate with commas) to compare several (default: the board's llm.model)")
	cmd.Flags().StringArrayVar(&moreModels, "models", nil, "same as --model")
	cmd.Flags().StringVar(&host, "host", "", "Ollama server (default: the board's llm.host, $OLLAMA_HOST, 127.0.0.1:11434)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON (totals, each model's summary and per-case results)")
	cmd.Flags().StringVar(&markdown, "markdown", "", "also write a Markdown report (table and the cases that were not right) to this file")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long one case may take")
	rootCmd.AddCommand(cmd)
}

// progressBar draws on stderr: redrawn in place on a terminal, a line per
// tenth otherwise (so a CI log stays short).
type progressBar struct {
	w     io.Writer
	tty   bool
	last  int // tenths printed (non-terminal)
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar {
	tty := false
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil {
			tty = st.Mode()&os.ModeCharDevice != 0
		}
	}
	return &progressBar{w: w, tty: tty}
}

func (p *progressBar) update(done, total int, model string) {
	if total == 0 {
		return
	}
	if !p.tty {
		if tenth := done * 10 / total; tenth > p.last || done == total {
			p.last = tenth
			fmt.Fprintf(p.w, "eval: %d/%d cases (%s)\n", done, total, model)
		}
		return
	}
	const width = 30
	fill := done * width / total
	fmt.Fprintf(p.w, "\r[%s%s] %d/%d %s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), done, total, model)
	p.drawn = true
}

func (p *progressBar) done() {
	if p.drawn {
		fmt.Fprintln(p.w)
	}
}
