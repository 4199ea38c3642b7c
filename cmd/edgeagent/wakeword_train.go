package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword/wwtrain"
)

func wakewordTrainCmd() *cobra.Command {
	var (
		phrase, out string
		seed        uint64
		workers     int
		epochs      int
		posUtt      int
		recipe      string
		valOnly     bool
	)
	cmd := &cobra.Command{
		Use:   "train --phrase TEXT --out DIR",
		Short: "Train a speaker-independent wake-word model from synthetic speech (espeak-ng, flite, festival)",
		Long: `Trains a small neural wake-word model for any phrase on this machine's CPU,
from nothing but speech synthesisers: the phrase in dozens of espeak-ng
voices (and flite's speakers, per the recipe's other_engines), speeds,
pitches and word gaps, mixed into rooms with white, pink and babble noise;
as negatives, phrases that sound close (generated from yours: "okay robot",
"hey rowboat" for "hey robot"), parts of the phrase, ordinary speech and
noise. Whole voices are held out of training and reported separately, and
so is an engine training never hears (festival). The threshold is chosen
for the target false-accept rate on held-out speech.

Needs espeak-ng, flite and festival with two voices (Debian: apt-get install
espeak-ng flite festival festvox-kdlpc16k festvox-us-slt-hts).

DIR receives NAME.eaww (the model: use it as a mic's wakeword.model),
report.md and report.json (recall per voice group and noise, false accepts
per hour, confusables), and cache/ (the synthesised speech: a rerun resumes
from it). The same --seed gives the same model.`,
		Example: `  edgeagent wakeword train --phrase "hey jarvis" --out /tmp/jarvis
  edgeagent wakeword test --model /tmp/jarvis/hey_jarvis.eaww kitchen.wav`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if phrase == "" || out == "" {
				return errors.New("--phrase and --out are required")
			}
			cfg := wwtrain.DefaultConfig(phrase)
			if recipe != "" {
				// Fields not named keep the default recipe's values.
				dec := json.NewDecoder(strings.NewReader(recipe))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&cfg); err != nil {
					return fmt.Errorf("--recipe: %w", err)
				}
			}
			cfg.Seed = seed
			cfg.SkipTest = valOnly
			if workers > 0 {
				cfg.Workers = workers
			}
			if epochs > 0 {
				cfg.Epochs = epochs
			}
			if posUtt > 0 {
				cfg.PosUtterances = posUtt
			}
			if os.Getenv("GOGC") == "" {
				// The trainer's heap is gigabytes of samples and
				// features without pointers, cheap to collect often:
				// at 25 the default run peaked at 2.7 GB instead of
				// 6.0 GB with the same training time (docs/bench/wake-word.md).
				debug.SetGCPercent(25)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			res, err := wwtrain.Train(ctx, cfg, out, time.Now(), cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), res.Report.Markdown())
			fmt.Fprintf(cmd.OutOrStdout(), "\nmodel: %s\n", res.Path)
			return nil
		},
	}
	cmd.Flags().StringVar(&phrase, "phrase", "", "the wake phrase: 1 to 5 words (e.g. \"hey robot\")")
	cmd.Flags().StringVar(&out, "out", "", "directory for the model, its report and the speech cache")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed: the same seed gives the same model")
	cmd.Flags().IntVar(&workers, "workers", 2, "parallel workers (does not change the model)")
	cmd.Flags().IntVar(&epochs, "epochs", 0, "training epochs (default: the recipe's)")
	cmd.Flags().IntVar(&posUtt, "positives", 0, "utterances of the phrase to synthesise (default: the recipe's)")
	cmd.Flags().StringVar(&recipe, "recipe", "", `changes to the default recipe as JSON, e.g. '{"channels":64,"epochs":20}' (field names as in the model's training record)`)
	cmd.Flags().BoolVar(&valOnly, "validation-only", false, "evaluate on the validation split only (for comparing recipes without looking at the test groups)")
	return cmd
}
