package wwtrain

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// synth runs espeak-ng and caches what it says as 16 kHz WAV files under
// dir, named by a hash of the delivery: a training run that stops resumes
// without re-synthesising, and a run with another seed reuses whatever
// deliveries coincide.
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
	cmd := exec.CommandContext(ctx, s.bin, "-v", d.Voice.String(), "-s", itoa(d.Speed), "-p", itoa(d.Pitch),
		"-a", itoa(d.Amp), "-g", itoa(d.Gap), "--stdout", d.Text)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("espeak-ng %s %q: %v: %s", d.Voice, d.Text, err, strings.TrimSpace(errb.String()))
	}
	r, err := audio.NewWAVReader(&out)
	if err != nil {
		return nil, fmt.Errorf("espeak-ng %s: %w", d.Voice, err)
	}
	x, err := audio.ReadAll(r)
	if err != nil {
		return nil, err
	}
	x = trimSilence(x)
	if len(x) < audio.Rate/10 {
		return nil, fmt.Errorf("espeak-ng %s said almost nothing for %q", d.Voice, d.Text)
	}
	return x, writeCache(p, x)
}

// writeCache stores samples at p atomically through a temporary file of
// its own: two workers may synthesise the same delivery at once (the
// result is the same), and neither may see the other's half-written file.
func writeCache(p string, x []int16) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".synth-*")
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = audio.WriteWAV(bw, audio.Rate, x)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
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
