package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/sensors/mic"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	"github.com/edgeagent/edgeagent/sensors/sensorconf"
)

// wakewordCmd is `edgeagent wakeword`; the workstation's subcommands
// (train, eval: wakeword_train.go) add themselves to it.
var wakewordCmd = &cobra.Command{
	Use:   "wakeword",
	Short: "Train and test the offline wake word",
	Long: `The built-in wake-word detector runs a trained, speaker-independent model
(the shipped "hey robot", or your own phrase: train). Check it on recordings
of the place it will listen in (test).`,
}

func init() {
	wakewordCmd.AddCommand(wakewordTestCmd(), wakewordDevicesCmd())
	rootCmd.AddCommand(wakewordCmd)
}

// micOpts is what the wakeword commands take from --board and --mic: the
// options and name of the board file's mic micName (its only mic when
// micName is empty), or the defaults and no name without a board.
func micOpts(boardPath, micName string) (mic.Opts, string, error) {
	if boardPath == "" {
		return mic.DefaultOpts(), "", nil
	}
	cfg, err := board.Load(boardPath)
	if err != nil {
		return mic.Opts{}, "", err
	}
	var found []board.Sensor
	var names []string
	for _, s := range cfg.Sensors {
		if s.Kind != mic.Kind {
			continue
		}
		names = append(names, s.Name)
		if micName == "" || s.Name == micName {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		if micName != "" {
			return mic.Opts{}, "", fmt.Errorf("%s: no mic %q (mics: %s)", boardPath, micName, strings.Join(names, ", "))
		}
		return mic.Opts{}, "", fmt.Errorf("%s: %d mics (%s); choose one with --mic", boardPath, len(names), strings.Join(names, ", "))
	}
	s := found[0]
	sc, _, err := sensorconf.Of(cfg, s, filepath.Dir(boardPath))
	if err != nil {
		return mic.Opts{}, "", err
	}
	o, err := mic.DecodeOpts(sc)
	if err != nil {
		return mic.Opts{}, "", fmt.Errorf("%s: mic %s: %w", boardPath, s.Name, err)
	}
	return o, s.Name, nil
}

type detectionJSON struct {
	File   string  `json:"file"`
	Name   string  `json:"name"`
	TimeS  float64 `json:"time_s"`
	Score  float64 `json:"score"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
}

type summaryJSON struct {
	File       string  `json:"file"`
	AudioS     float64 `json:"audio_s"`
	SpeechS    float64 `json:"speech_s"`
	Detections int     `json:"detections"`
	RTF        float64 `json:"real_time_factor"`
	Threshold  float64 `json:"threshold"`
}

// wakewordTest is a run of `wakeword test`: its flags, then what they
// resolve to with the board's mic settings.
type wakewordTest struct {
	boardPath, micName string
	model, labelsPath  string
	modelThreshold     float64
	asJSON             bool

	from  string // where the settings come from, for the header lines
	heads []*wakeword.Head
	opts  wakeword.HeadOptions
}

func wakewordTestCmd() *cobra.Command {
	t := &wakewordTest{}
	cmd := &cobra.Command{
		Use:   "test [--board B | --model FILE] [--labels L.tsv] FILE.wav…",
		Short: "Run the VAD and the wake-word detector over recordings and print what fires",
		Long: `Runs the voice activity detector and the wake-word detector over WAV
recordings as fast as possible, as the mic sensor would run them live, and
prints each detection with its time and score, then a summary line per file
(audio seconds, speech seconds, detections, real-time factor). With
--labels, a TSV of FILE<TAB>N lines (N: how many times FILE says the wake
phrase; 0 for recordings of other sound), it ends with the recall and the
false accepts per hour over all labelled files.

Use it to choose a threshold before trusting one: record the phrase in the
room (it should fire once per utterance) and an hour of the room's ordinary
sound — television, talk, kitchen (it should not fire). Start recordings with
two or three seconds of the room's background: the VAD learns the noise floor
from it, and the head's window reaches two seconds back, as it does live.`,
		Example: `  edgeagent wakeword test --model builtin kitchen.wav
  edgeagent wakeword test --model builtin --labels recordings/labels.tsv
  edgeagent wakeword test --board board-configs/rpi5.yaml --model-threshold 0.9 evening.wav`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := t.resolve(cmd); err != nil {
				return err
			}
			var lab labels
			if t.labelsPath != "" {
				var err error
				if lab, err = readLabels(t.labelsPath); err != nil {
					return err
				}
				args = append(args, lab.files...)
			}
			if len(args) == 0 {
				return errors.New("give WAV files or --labels")
			}
			out := cmd.OutOrStdout()
			var tally labelTally
			enc := json.NewEncoder(out)
			for _, f := range args {
				if err := t.file(out, enc, f, lab, &tally); err != nil {
					return err
				}
			}
			if t.labelsPath != "" {
				tally.print(out, t.asJSON)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&t.model, "model", "", "trained head file, or builtin (default: the board mic's wakeword.model)")
	cmd.Flags().Float64Var(&t.modelThreshold, "model-threshold", 0, "threshold on the head's score (default: the board's, else the head's own)")
	cmd.Flags().StringVar(&t.labelsPath, "labels", "", "TSV of FILE<TAB>N (how many wake phrases FILE holds; 0 for other speech): report recall and false accepts per hour")
	cmd.Flags().StringVar(&t.boardPath, "board", "", "board file whose mic settings (model, threshold, VAD) to use")
	cmd.Flags().StringVar(&t.micName, "mic", "", "the mic sensor's name, when the board has several")
	cmd.Flags().BoolVar(&t.asJSON, "json", false, "one JSON object per detection and per file")
	return cmd
}

// resolve fills what the flags leave out from the board's mic (or the
// defaults), as the mic sensor would run, and loads the head.
func (t *wakewordTest) resolve(cmd *cobra.Command) error {
	o, n, err := micOpts(t.boardPath, t.micName)
	if err != nil {
		return err
	}
	t.from = "defaults"
	if n != "" {
		t.from = fmt.Sprintf("%s's mic %s", t.boardPath, n)
	}
	if t.model == "" {
		t.model = o.WakeWord.Model
	}
	if !cmd.Flags().Changed("model-threshold") {
		t.modelThreshold = o.WakeWord.ModelThreshold
	}
	if t.heads, err = mic.LoadHeads(mic.WakeWordOpts{Model: t.model}); err != nil {
		return err
	}
	if len(t.heads) == 0 {
		return errors.New("no wake-word model to test (--model none, or the board's wakeword.model is none)")
	}
	t.opts = wakeword.HeadOptions{Threshold: t.modelThreshold, Refractory: o.WakeWord.Refractory, VAD: o.VADOptions()}
	return nil
}

// file runs a fresh detector over one recording, as fast as it goes, and
// prints its detections and summary; a labelled file counts in tally.
func (t *wakewordTest) file(out io.Writer, enc *json.Encoder, f string, lab labels, tally *labelTally) error {
	samples, err := audio.ReadWAVFile(f)
	if err != nil {
		return err
	}
	fe, err := wakeword.NewSpeechFrontend()
	if err != nil {
		return err
	}
	sp := wakeword.NewHeads(t.heads, fe, t.opts)
	if !t.asJSON {
		t.header(out, f, sp)
	}
	speech := 0
	t0 := time.Now()
	dets := sp.Process(nil, samples, func(s bool) {
		if s {
			speech++
		}
	})
	cpu := time.Since(t0)
	secs := float64(len(samples)) / audio.Rate
	if want, ok := lab.want[f]; ok {
		tally.add(want, len(dets), secs)
	}
	for _, d := range dets {
		t.detection(out, enc, f, d)
	}
	sum := summaryJSON{File: f, AudioS: round3(secs), SpeechS: float64(speech) / 100, Detections: len(dets),
		RTF: cpu.Seconds() / secs, Threshold: sp.Threshold(0)}
	if t.asJSON {
		enc.Encode(sum)
		return nil
	}
	fmt.Fprintf(out, "%s: %.1f s of audio (%.1f s speech), %d detection(s), real-time factor %.4f\n",
		f, sum.AudioS, sum.SpeechS, sum.Detections, sum.RTF)
	return nil
}

// header names a file's heads with their thresholds and where the
// settings come from.
func (t *wakewordTest) header(out io.Writer, f string, sp *wakeword.Heads) {
	var ns []string
	for i, h := range t.heads {
		ns = append(ns, fmt.Sprintf("%s (model %s, threshold %.2f)", h.Info.Name, t.model, sp.Threshold(i)))
	}
	fmt.Fprintf(out, "# %s: %s (%s)\n", f, strings.Join(ns, ", "), t.from)
}

// detection prints one detection.
func (t *wakewordTest) detection(out io.Writer, enc *json.Encoder, f string, d wakeword.Detection) {
	if t.asJSON {
		enc.Encode(detectionJSON{File: f, Name: d.Name, TimeS: d.At.Seconds(), Score: round3(d.Score),
			StartS: d.Start.Seconds(), EndS: d.End.Seconds()})
		return
	}
	fmt.Fprintf(out, "%9.2f s  %-16s score %.3f  window %.2f–%.2f s\n",
		d.At.Seconds(), d.Name, d.Score, d.Start.Seconds(), d.End.Seconds())
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

func wakewordDevicesCmd() *cobra.Command {
	var backends []string
	cmd := &cobra.Command{
		Use:   "devices",
		Short: "List capture devices (IDs and names for a mic's device option)",
		RunE: func(cmd *cobra.Command, args []string) error {
			ds, err := mic.ListCaptureDevices(backends)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if len(ds) == 0 {
				fmt.Fprintln(out, "no capture devices")
			}
			for _, d := range ds {
				def := ""
				if d.IsDefault {
					def = "  (default)"
				}
				fmt.Fprintf(out, "%-24s %s%s\n    formats: %s\n", d.ID, d.Name, def, d.Formats)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&backends, "backend", nil, "audio backends to ask (alsa, pulseaudio, jack, null …)")
	return cmd
}
