package wakeword

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// synth runs espeak-ng (and, for evaluation only, flite and festival) and
// caches what they say as 16 kHz WAV files under dir, named by a hash of
// the delivery: a training run that stops resumes without
// re-synthesising, and a run with another seed reuses whatever deliveries
// coincide.
type synth struct {
	bin string
	dir string
}

func newSynth(cacheDir string) (*synth, error) {
	bin, err := exec.LookPath("espeak-ng")
	if err != nil {
		return nil, errors.New("training needs espeak-ng to synthesise the phrase (Debian: apt-get install espeak-ng)")
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, err
	}
	return &synth{bin: bin, dir: cacheDir}, nil
}

// engineTools are the programs (and, for festival, voice packages) each
// other engine needs, with the Debian packages that bring them.
var engineTools = map[string]struct{ bin, pkgs string }{
	engineFlite:    {"flite", "flite"},
	engineFestival: {"text2wave", "festival festvox-kdlpc16k festvox-us-slt-hts"},
}

// checkEngines fails before any synthesis if a delivery needs an engine
// that is not installed, naming the packages to install.
func checkEngines(ds []Delivery) error {
	seen := map[string]bool{}
	for _, d := range ds {
		e := d.Voice.Engine
		if e == "" || seen[e] {
			continue
		}
		seen[e] = true
		t, ok := engineTools[e]
		if !ok {
			return fmt.Errorf("unknown speech engine %q", e)
		}
		if _, err := exec.LookPath(t.bin); err != nil {
			return fmt.Errorf("training needs %s for its %s voices (Debian: apt-get install %s)", t.bin, e, t.pkgs)
		}
	}
	return nil
}

// command is the program that says d and writes a WAV file: on stdout
// (espeak-ng) or at out (the others, which cannot write to a pipe).
// Speed and pitch map onto flite's duration stretch and mean pitch around
// espeak-ng's defaults (175 words a minute, pitch 50); festival's voices
// take the speed only. Amplitude and word gap are espeak-ng's alone: the
// clip's level is set again when it is mixed.
func (s *synth) command(ctx context.Context, d Delivery, out string) *exec.Cmd {
	stretch := strconv.FormatFloat(175/float64(d.Speed), 'f', 3, 64)
	switch d.Voice.Engine {
	case engineFlite:
		f0 := fliteF0[d.Voice.Variant] * math.Exp2(float64(d.Pitch-50)/100)
		return exec.CommandContext(ctx, engineTools[engineFlite].bin, "-voice", d.Voice.Variant, "--setf", "duration_stretch="+stretch,
			"--setf", "int_f0_target_mean="+strconv.FormatFloat(f0, 'f', 1, 64), "-t", d.Text, "-o", out)
	case engineFestival:
		cmd := exec.CommandContext(ctx, engineTools[engineFestival].bin, "-F", itoa(audio.Rate), "-eval", "(voice_"+d.Voice.Variant+")",
			"-eval", "(Parameter.set 'Duration_Stretch "+stretch+")", "-o", out)
		cmd.Stdin = strings.NewReader(d.Text)
		return cmd
	}
	return exec.CommandContext(ctx, s.bin, "-v", d.Voice.String(), "-s", itoa(d.Speed), "-p", itoa(d.Pitch),
		"-a", itoa(d.Amp), "-g", itoa(d.Gap), "--stdout", d.Text)
}

// fliteF0 is a rough centre pitch in Hz for each flite voice (a man's
// or a woman's speaking pitch, not measured per voice); the delivery's
// pitch (15..85) moves it by up to ±0.35 octave. kal16, awb and slt
// follow it (an autocorrelation pitch of 87–91 Hz for a target of 80,
// 208–213 Hz for 200); rms keeps its own (94 Hz for both).
var fliteF0 = map[string]float64{"kal": 105, "kal16": 105, "rms": 105, "awb": 105, "slt": 170}

func (s *synth) path(d Delivery) string {
	h := sha1.Sum([]byte(d.key()))
	return filepath.Join(s.dir, hex.EncodeToString(h[:8])+".wav")
}

// say returns the delivery as 16 kHz mono samples trimmed of leading and
// trailing silence.
func (s *synth) say(ctx context.Context, d Delivery) ([]int16, error) {
	p := s.path(d)
	if x, err := audio.ReadWAVFile(p); err == nil && len(x) > 0 {
		return x, nil
	}
	var out, errb bytes.Buffer
	file := ""
	if d.Voice.Engine != "" {
		f, err := os.CreateTemp(s.dir, ".say-*.wav")
		if err != nil {
			return nil, err
		}
		file = f.Name()
		f.Close()
		defer os.Remove(file)
	}
	cmd := s.command(ctx, d, file)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("synthesising %s %q: %v: %s", d.Voice, d.Text, err, strings.TrimSpace(errb.String()))
	}
	var x []int16
	var err error
	if file != "" {
		x, err = audio.ReadWAVFile(file)
	} else {
		var r *audio.WAVReader
		if r, err = audio.NewWAVReader(&out); err == nil {
			x, err = audio.ReadAll(r)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("synthesising %s: %w", d.Voice, err)
	}
	x = trimSilence(x)
	if len(x) < audio.Rate/10 {
		return nil, fmt.Errorf("%s said almost nothing for %q", d.Voice, d.Text)
	}
	return x, writeCache(p, x)
}

// writeCache stores samples at p atomically (writeAtomic): two workers
// may synthesise the same delivery at once (the result is the same), and
// neither may see the other's half-written file.
func writeCache(p string, x []int16) error {
	var b bytes.Buffer
	if err := audio.WriteWAV(&b, audio.Rate, x); err != nil {
		return err
	}
	return writeAtomic(p, b.Bytes())
}

// sayAll synthesises every delivery with n workers; the result is in the
// order of ds whatever the scheduling. tick is called once per delivery.
func (s *synth) sayAll(ctx context.Context, ds []Delivery, n int, tick func()) ([][]int16, error) {
	out := make([][]int16, len(ds))
	errs := make([]error, len(ds))
	if err := parallel(ctx, len(ds), n, func(i int) {
		out[i], errs[i] = s.say(ctx, ds[i])
		tick()
	}); err != nil {
		return nil, err
	}
	return out, errors.Join(errs...)
}

// phonemes is espeak-ng's phoneme transcription of each text as the
// voice of accent reads it, without stress marks: two texts with the same
// phonemes sound the same ("hay robot" for "hey robot"; espeak-ng's
// Spanish voice reads "hey rovot" as "hey robot") and cannot be a
// negative for each other. One espeak-ng run reads every text, one per
// line, and writes one line of phonemes for each: the same phonemes as a
// run per text (checked for 817 texts in 13 accents), hundreds of
// processes fewer.
func (s *synth) phonemes(ctx context.Context, accent string, texts []string) ([]string, error) {
	var in strings.Builder
	for _, t := range texts {
		if strings.TrimSpace(t) == "" || strings.ContainsAny(t, ".\n") {
			return nil, fmt.Errorf("espeak-ng phonemes: %q is not one clause", t)
		}
		in.WriteString(t + "\n")
	}
	cmd := exec.CommandContext(ctx, s.bin, "-q", "-x", "-v", accent)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("espeak-ng phonemes in %s: %w", accent, err)
	}
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, barePhonemes(l))
		}
	}
	if len(lines) != len(texts) {
		return nil, fmt.Errorf("espeak-ng phonemes in %s: %d lines for %d texts", accent, len(lines), len(texts))
	}
	return lines, nil
}

// barePhonemes drops stress marks and word and pause boundaries: what is
// left is what is heard.
func barePhonemes(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\'' || r == ',' || r == ' ' || r == '\n' || r == '_' {
			return -1
		}
		return r
	}, s)
}

// trimSilence cuts leading and trailing samples below -50 dBFS (in 10 ms
// steps), as espeak-ng pads its output.
func trimSilence(x []int16) []int16 {
	const hop = 160
	const th = 32768 * 0.00316 // -50 dBFS
	loud := func(i int) bool { return audio.RMS(x[i*hop:min(len(x), (i+1)*hop)]) > th }
	n := (len(x) + hop - 1) / hop
	a, b := 0, n-1
	for a < n && !loud(a) {
		a++
	}
	for b > a && !loud(b) {
		b--
	}
	if a >= n {
		return nil
	}
	return x[a*hop : min(len(x), (b+1)*hop)]
}
