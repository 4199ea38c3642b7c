package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/mic"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	"github.com/edgeagent/edgeagent/sensors/sensorconf"
)

// wakewordCmd is `edgeagent wakeword`; the workstation's subcommands
// (train, eval: wakeword_train.go) add themselves to it.
var wakewordCmd = &cobra.Command{
	Use:   "wakeword",
	Short: "Train, enrol and test the offline wake word",
	Long: `The built-in wake-word detector runs a trained, speaker-independent model
(the shipped "hey robot", or your own phrase: train), optionally personalised
by recordings of your voice (enroll); the recordings alone give the older
by-example detector, which recognises the voice that enrolled. Check either
on recordings of the place it will listen in (test).`,
}

func init() {
	wakewordCmd.AddCommand(wakewordEnrollCmd(), wakewordTestCmd(), wakewordDevicesCmd())
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

func wakewordEnrollCmd() *cobra.Command {
	var (
		name, templates, boardPath, micName string
		record                              int
		seconds                             time.Duration
	)
	cmd := &cobra.Command{
		Use:   "enroll --name NAME [FILE.wav…]",
		Short: "Enrol a wake word from recordings of it (or record them now)",
		Long: `Enrols a wake word from three or more recordings of the phrase: WAV files of
any rate and channel count, or --record N takes from the microphone (the
board's mic with --board, else the system's default device). Each take is
trimmed to its speech; takes that are too short, too long, too quiet or
unlike the others are refused with the reason. The takes are stored in the
templates directory (--templates, else the board mic's wakeword.templates)
as NAME/take_*.wav.

Record at the distance and in the room the robot will listen in, with its
own microphone, and vary your delivery a little between takes.`,
		Example: `  edgeagent wakeword enroll --name hey_robot --templates board-configs/wakewords take1.wav take2.wav take3.wav
  edgeagent wakeword enroll --board board-configs/rpi5.yaml --name hey_robot --record 4`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if name == "" {
				return errors.New("--name is required")
			}
			o, n, err := micOpts(boardPath, micName)
			if err != nil {
				return err
			}
			micLabel := "the default capture device"
			if n != "" {
				micLabel = fmt.Sprintf("%s's mic %s (%s)", boardPath, n, o.Source)
			}
			if templates == "" {
				templates = o.WakeWord.Templates
			}
			if templates == "" {
				return errors.New("where to store the templates: --templates DIR, or --board with a mic")
			}
			var recs [][]int16
			switch {
			case record > 0 && len(args) > 0:
				return errors.New("give WAV files or --record, not both")
			case record > 0:
				recs, err = recordTakes(cmd.Context(), out, o, micLabel, record, seconds)
				if err != nil {
					return err
				}
			case len(args) > 0:
				for _, f := range args {
					s, err := audio.ReadWAVFile(f)
					if err != nil {
						return err
					}
					recs = append(recs, s)
				}
			default:
				return errors.New("give the recordings (FILE.wav…) or --record N")
			}
			m, err := wakeword.Enroll(name, recs)
			if err != nil {
				return err
			}
			if err := m.Save(templates, clock.Real().Now()); err != nil {
				return err
			}
			for i, t := range m.Takes {
				fmt.Fprintf(out, "take %d: %.2f s of speech\n", i+1, float64(len(t))/audio.Rate)
			}
			fmt.Fprintf(out, "enrolled %q in %s (%d takes, spread %.2f)\n", name, filepath.Join(templates, name), len(m.Takes), m.Spread())
			fmt.Fprintf(out, "now check it: edgeagent wakeword test --templates %s RECORDING.wav\n", templates)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "wake word name: lower-case letters, digits, _ and - (e.g. hey_robot)")
	cmd.Flags().StringVar(&templates, "templates", "", "templates directory (default: the board mic's wakeword.templates)")
	cmd.Flags().StringVar(&boardPath, "board", "", "board file whose mic to record from and whose templates directory to use")
	cmd.Flags().StringVar(&micName, "mic", "", "the mic sensor's name, when the board has several")
	cmd.Flags().IntVar(&record, "record", 0, "record this many takes from the microphone")
	cmd.Flags().DurationVar(&seconds, "seconds", 3*time.Second, "length of each recorded take")
	return cmd
}

// recordTakes records n takes of length d from the configured source.
func recordTakes(ctx context.Context, out io.Writer, o mic.Opts, label string, n int, d time.Duration) ([][]int16, error) {
	if n < wakeword.MinTakes {
		return nil, fmt.Errorf("--record %d: enrolment needs at least %d takes", n, wakeword.MinTakes)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	src, err := mic.NewSource(o, clock.Real())
	if err != nil {
		return nil, err
	}
	st, err := src.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	context.AfterFunc(ctx, func() { st.Close() })
	fmt.Fprintf(out, "recording %d takes of %v from %s\n", n, d, label)
	var takes [][]int16
	buf := make([]int16, 1600)
	want := int(d.Seconds() * audio.Rate)
	for i := 0; i < n; i++ {
		// Let the previous take's tail and the prompt's reading time pass,
		// then discard what the device buffered meanwhile.
		drain := audio.Rate / 2
		for drain > 0 {
			k, err := st.Read(buf[:min(len(buf), drain)])
			if err != nil {
				return nil, err
			}
			drain -= k
		}
		fmt.Fprintf(out, "take %d/%d: say the phrase now … ", i+1, n)
		take := make([]int16, 0, want)
		for len(take) < want {
			k, err := st.Read(buf[:min(len(buf), want-len(take))])
			if err != nil {
				return nil, err
			}
			take = append(take, buf[:k]...)
		}
		var m audio.Meter
		m.Add(take)
		peak, _ := m.Read()
		fmt.Fprintf(out, "done (peak %.0f dBFS)\n", peak)
		takes = append(takes, take)
	}
	return takes, nil
}

type detectionJSON struct {
	File   string  `json:"file"`
	Name   string  `json:"name"`
	TimeS  float64 `json:"time_s"`
	Score  float64 `json:"score"`
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	Bank   string  `json:"bank"`
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
	templates, boardPath, micName string
	model, labelsPath             string
	names                         []string
	threshold, modelThreshold     float64
	asJSON                        bool

	from   string // where the settings come from, for the header lines
	models []*wakeword.Model
	opts   wakeword.Options
}

func wakewordTestCmd() *cobra.Command {
	t := &wakewordTest{}
	cmd := &cobra.Command{
		Use:   "test [--board B | --model FILE | --templates DIR] [--labels L.tsv] FILE.wav…",
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
from it, and the detector re-mixes the templates with it, as it does live.`,
		Example: `  edgeagent wakeword test --model builtin kitchen.wav
  edgeagent wakeword test --model builtin --labels recordings/labels.tsv
  edgeagent wakeword test --templates board-configs/wakewords kitchen.wav
  edgeagent wakeword test --board board-configs/rpi5.yaml --threshold 0.85 evening.wav`,
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
	cmd.Flags().StringVar(&t.templates, "templates", "", "templates directory (default: the board mic's wakeword.templates)")
	cmd.Flags().StringVar(&t.model, "model", "", "trained head file, or builtin (default: the board mic's wakeword.model)")
	cmd.Flags().Float64Var(&t.modelThreshold, "model-threshold", 0, "threshold on the head's score (default: the board's, else the head's own)")
	cmd.Flags().StringVar(&t.labelsPath, "labels", "", "TSV of FILE<TAB>N (how many wake phrases FILE holds; 0 for other speech): report recall and false accepts per hour")
	cmd.Flags().StringVar(&t.boardPath, "board", "", "board file whose mic settings (templates, threshold, VAD) to use")
	cmd.Flags().StringVar(&t.micName, "mic", "", "the mic sensor's name, when the board has several")
	cmd.Flags().StringSliceVar(&t.names, "name", nil, "wake words to test (default: all enrolled)")
	cmd.Flags().Float64Var(&t.threshold, "threshold", 0, "score threshold 0..1 (default: the board's, else the detector's)")
	cmd.Flags().BoolVar(&t.asJSON, "json", false, "one JSON object per detection and per file")
	return cmd
}

// resolve fills what the flags leave out from the board's mic (or the
// defaults), as the mic sensor would run, and loads the head and the
// templates.
func (t *wakewordTest) resolve(cmd *cobra.Command) error {
	o, n, err := micOpts(t.boardPath, t.micName)
	if err != nil {
		return err
	}
	t.from = "defaults"
	if n != "" {
		t.from = fmt.Sprintf("%s's mic %s", t.boardPath, n)
	}
	if t.templates == "" {
		t.templates = o.WakeWord.Templates
	}
	if len(t.names) == 0 {
		t.names = o.WakeWord.Names
	}
	if t.model == "" {
		t.model = o.WakeWord.Model
	}
	if t.model == "" && t.templates == "" {
		t.model = mic.ModelBuiltin // as a board without a wakeword section
	}
	if !cmd.Flags().Changed("threshold") {
		t.threshold = o.WakeWord.Threshold
	}
	if !cmd.Flags().Changed("model-threshold") {
		t.modelThreshold = o.WakeWord.ModelThreshold
	}
	heads, err := mic.LoadHeads(mic.WakeWordOpts{Model: t.model})
	if err != nil {
		return err
	}
	if t.templates != "" && len(t.names) == 0 {
		if t.models, err = wakeword.LoadAll(t.templates); err != nil {
			return err
		}
	}
	for _, n := range t.names {
		m, err := wakeword.Load(t.templates, n)
		if err != nil {
			return err
		}
		t.models = append(t.models, m)
	}
	t.opts = wakeword.Options{Threshold: t.threshold, Refractory: o.WakeWord.Refractory,
		VAD: o.VADOptions(), Heads: heads, HeadThreshold: t.modelThreshold}
	return nil
}

// file runs a fresh detector over one recording, as fast as it goes, and
// prints its detections and summary; a labelled file counts in tally.
func (t *wakewordTest) file(out io.Writer, enc *json.Encoder, f string, lab labels, tally *labelTally) error {
	samples, err := audio.ReadWAVFile(f)
	if err != nil {
		return err
	}
	opts := t.opts
	if len(opts.Heads) > 0 {
		if opts.Frontend, err = wakeword.NewSpeechFrontend(); err != nil {
			return err
		}
	}
	sp, err := wakeword.NewSpotter(t.models, opts)
	if err != nil {
		return err
	}
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
		RTF: cpu.Seconds() / secs, Threshold: sp.Threshold()}
	if t.asJSON {
		enc.Encode(sum)
		return nil
	}
	fmt.Fprintf(out, "%s: %.1f s of audio (%.1f s speech), %d detection(s), real-time factor %.4f\n",
		f, sum.AudioS, sum.SpeechS, sum.Detections, sum.RTF)
	return nil
}

// header names a file's detectors with their thresholds and where the
// settings come from.
func (t *wakewordTest) header(out io.Writer, f string, sp *wakeword.Spotter) {
	var ns []string
	for i, h := range t.opts.Heads {
		ns = append(ns, fmt.Sprintf("%s (model %s, threshold %.2f)", h.Info.Name, t.model, sp.HeadThreshold(i)))
	}
	for _, m := range t.models {
		ns = append(ns, fmt.Sprintf("%s (templates %s, threshold %.2f)", m.Name, t.templates, sp.Threshold()))
	}
	fmt.Fprintf(out, "# %s: %s (%s)\n", f, strings.Join(ns, ", "), t.from)
}

// detection prints one detection: which bank of templates fired ("clean",
// the SNR of a noise-mixed bank, "-" for the head).
func (t *wakewordTest) detection(out io.Writer, enc *json.Encoder, f string, d wakeword.Detection) {
	bank := "clean"
	switch {
	case d.Detector == wakeword.DetectorModel:
		bank = "-"
	case !math.IsInf(d.SNR, 1):
		bank = fmt.Sprintf("%g dB", d.SNR)
	}
	if t.asJSON {
		enc.Encode(detectionJSON{File: f, Name: d.Name, TimeS: d.At.Seconds(), Score: round3(d.Score),
			StartS: d.Start.Seconds(), EndS: d.End.Seconds(), Bank: bank})
		return
	}
	fmt.Fprintf(out, "%9.2f s  %-16s %-9s score %.3f  phrase %.2f–%.2f s  bank %s\n",
		d.At.Seconds(), d.Name, d.Detector, d.Score, d.Start.Seconds(), d.End.Seconds(), bank)
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
