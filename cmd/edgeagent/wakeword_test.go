package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// wakeword test --labels: the shipped model over a recording with the
// phrase (a held-out voice) and one with other speech only; the summary
// counts the phrase and the hours of audio.
func TestWakewordTestLabels(t *testing.T) {
	dir := t.TempDir()
	read := func(name string) []int16 {
		s, err := audio.ReadWAVFile(filepath.Join("../../sensors/mic/testdata/speech", name))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	scene := func(file string, clip []int16) {
		sig := make([]int16, 5*audio.Rate)
		audio.NewNoise("pink", audio.DBFS(audio.RMS(clip))-20, 3).Fill(sig)
		for i, v := range clip {
			j := 2*audio.Rate + i
			sig[j] = int16(max(-32768, min(32767, int32(sig[j])+int32(v))))
		}
		if err := audio.WriteWAVFile(filepath.Join(dir, file), sig); err != nil {
			t.Fatal(err)
		}
	}
	scene("phrase.wav", read("pos/unseen_gb_f2.wav"))
	scene("other.wav", read("neg/turn_on_the_headlight.wav"))
	labels := filepath.Join(dir, "labels.tsv")
	if err := os.WriteFile(labels, []byte("# file\tphrases\nphrase.wav\t1\nother.wav\t0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetArgs([]string{"wakeword", "test", "--model", "builtin", "--labels", labels, "--json"})
	defer rootCmd.SetArgs(nil)
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	var sum struct {
		Phrases, Hits, FalseAccepts int
		Hours                       float64
		Recall                      float64 `json:"recall"`
		FA                          float64 `json:"fa_per_hour"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("%v in %q", err, out.String())
	}
	if sum.Phrases != 1 || sum.Hits != 1 || sum.FalseAccepts != 0 || sum.Recall != 1 || sum.Hours < 0.002 {
		t.Fatalf("summary %+v from %s", sum, out.String())
	}

	bad := filepath.Join(dir, "bad.tsv")
	os.WriteFile(bad, []byte("phrase.wav\tmany\n"), 0o644)
	rootCmd.SetArgs([]string{"wakeword", "test", "--model", "builtin", "--labels", bad})
	if err := rootCmd.Execute(); err == nil || !strings.Contains(err.Error(), "bad.tsv:1") {
		t.Fatalf("bad labels: %v", err)
	}
}
