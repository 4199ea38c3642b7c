//go:build !robot

package main

// The wake-word trainer and its evaluation are workstation tools: this
// file is all the CLI holds of them, and the robot profile leaves it out.

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/sensors/mic"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	trainww "github.com/edgeagent/edgeagent/train/wakeword"
)

func init() { wakewordCmd.AddCommand(wakewordTrainCmd(), wakewordEvalCmd()) }

// speechFrontend is the product's frontend for the trainer: one stream per
// worker over the shared weights.
func speechFrontend() (trainww.Frontend, error) {
	if _, err := wakeword.NewSpeechFrontend(); err != nil {
		return trainww.Frontend{}, err
	}
	return trainww.Frontend{ID: wakeword.SpeechFrontendID, New: func() wakeword.Frontend {
		f, _ := wakeword.NewSpeechFrontend() // checked above; the weights are loaded once
		return f
	}}, nil
}

func defaultCache() string {
	d, err := os.UserCacheDir()
	if err != nil {
		d = os.TempDir()
	}
	return filepath.Join(d, "edgeagent", "wakeword")
}

func wakewordTrainCmd() *cobra.Command {
	var (
		phrase, out, cache, recipe string
		seed                       uint64
		workers                    int
	)
	cmd := &cobra.Command{
		Use:   "train --phrase TEXT --out DIR",
		Short: "Train a wake-word head for any phrase from synthetic speech (espeak-ng)",
		Long: `Trains a small head for a phrase over the speech-embedding frontend (trained
on real speech; package speechembed), on this machine's CPU, from espeak-ng
alone: the phrase in every English accent and a few other languages, dozens of
voice variants, speeds and pitches, in rooms with white, pink and babble noise
and reverberation; as negatives, phrases that sound close (generated from
yours: "okay robot", "hey lobot" for "hey robot"), parts of the phrase, other
speech and noise, then the windows of more speech that the head still likes
(hard negatives). The threshold is the lowest at which espeak-ng validation
speakers, never trained on, give no false accept on their speech and at most
5 % of their confusables fire. flite and festival are never trained on:
evaluate on them with 'wakeword eval'.

DIR receives NAME.eawh (the head: a mic's wakeword.model) and report.json.
Synthesised speech and embeddings are cached under --cache, so a rerun with
another seed or recipe reuses them. The same --seed gives the same head.`,
		Example: `  edgeagent wakeword train --phrase "hey jarvis" --out /tmp/jarvis
  edgeagent wakeword eval --model /tmp/jarvis/hey_jarvis.eawh`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if phrase == "" || out == "" {
				return errors.New("--phrase and --out are required")
			}
			cfg := trainww.DefaultConfig(phrase)
			if recipe != "" {
				// Fields not named keep the default recipe's values.
				dec := json.NewDecoder(strings.NewReader(recipe))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&cfg); err != nil {
					return fmt.Errorf("--recipe: %w", err)
				}
			}
			cfg.Seed, cfg.Workers = seed, workers
			fe, err := speechFrontend()
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			res, err := trainww.Train(ctx, cfg, fe, out, cache, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			v := res.Report.Validation
			fmt.Fprintf(cmd.OutOrStdout(), "head: %s\nthreshold %.2f: validation recall %.1f %% of %d, confusables %.1f %% of %d, %d false accepts in %.2f h of speech (%.0f s)\n",
				res.Path, v.Threshold, 100*v.Recall, v.Phrases, 100*v.NearFire, v.Confusables, v.FalseAccept, v.SpeechHours, res.Report.Seconds)
			return nil
		},
	}
	cmd.Flags().StringVar(&phrase, "phrase", "", "the wake phrase: 1 to 5 words (e.g. \"hey robot\")")
	cmd.Flags().StringVar(&out, "out", "", "directory for the head and its report")
	cmd.Flags().StringVar(&cache, "cache", defaultCache(), "directory for synthesised speech and embeddings")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "random seed: the same seed gives the same head")
	cmd.Flags().IntVar(&workers, "workers", 2, "parallel workers (does not change the head)")
	cmd.Flags().StringVar(&recipe, "recipe", "", `changes to the default recipe as JSON, e.g. '{"hidden":[128],"epochs":12}' (field names as in report.json's recipe)`)
	return cmd
}

func wakewordEvalCmd() *cobra.Command {
	var (
		model, cache, out string
		cfg               = trainww.DefaultEvalConfig("")
	)
	cmd := &cobra.Command{
		Use:   "eval [--model FILE]",
		Short: "Measure a wake-word head on voices it was never trained on (flite, festival)",
		Long: `Runs the live detector (gated by the VAD, as the mic runs it) over speech by
flite's five and festival's two voices, which stand in for people and are
never trained on: the phrase (--reps per voice) clean, in 10 dB pink noise and
in 10 dB babble; the issue's and the trainer's held-out confusables; and
--minutes of other speech per engine (flite, festival, espeak-ng validation
speakers), clean and in pink noise, for false accepts per hour. Prints tables;
--out writes them as JSON too. Needs flite and festival (Debian: apt-get
install flite festival festvox-kdlpc16k festvox-us-slt-hts).`,
		Example: `  edgeagent wakeword eval --model builtin
  edgeagent wakeword eval --model /tmp/jarvis/hey_jarvis.eawh --minutes 30`,
		RunE: func(cmd *cobra.Command, args []string) error {
			heads, err := mic.LoadHeads(mic.WakeWordOpts{Model: model})
			if err != nil {
				return err
			}
			if len(heads) != 1 {
				return errors.New("--model: a head file, or builtin")
			}
			head := heads[0]
			fe, err := speechFrontend()
			if err != nil {
				return err
			}
			cfg.Phrase = head.Info.Phrase
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt)
			defer stop()
			rep, err := trainww.Evaluate(ctx, head, fe, cfg, cache, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), rep.Markdown())
			if out != "" {
				js, _ := json.MarshalIndent(rep, "", "  ")
				return os.WriteFile(out, append(js, '\n'), 0o644)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&model, "model", mic.ModelBuiltin, "head file (NAME.eawh), or builtin")
	cmd.Flags().StringVar(&cache, "cache", defaultCache(), "directory for synthesised speech")
	cmd.Flags().StringVar(&out, "out", "", "also write the report as JSON here")
	cmd.Flags().IntVar(&cfg.Reps, "reps", cfg.Reps, "deliveries of the phrase per voice")
	cmd.Flags().Float64Var(&cfg.SpeechMinutes, "minutes", cfg.SpeechMinutes, "minutes of other speech per engine and condition")
	cmd.Flags().Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the deliveries and scenes")
	cmd.Flags().IntVar(&cfg.Workers, "workers", cfg.Workers, "parallel workers")
	return cmd
}
