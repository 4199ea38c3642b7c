package wakeword

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	ww "github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword/wakewordtest"
)

// tinyConfig is a recipe that trains in seconds: enough to run every
// stage, nothing a detector should ship.
func tinyConfig() Config {
	c := DefaultConfig("hey robot")
	c.PosUtterances, c.NearReps, c.ContextUtterances, c.SpeechStreams, c.StreamUtts, c.NoiseClips = 12, 0, 4, 4, 2, 1
	c.Hidden, c.Dropout, c.Epochs, c.MineStreams, c.MineEpochs = []int{8}, 0.2, 2, 1, 1
	c.ValPos, c.ValStreams, c.ValNear = 4, 1, 1
	return c
}

var testFrontend = Frontend{ID: "wakewordtest", New: func() ww.Frontend { return &wakewordtest.Frontend{} }}

func needESpeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (apt-get install espeak-ng)")
	}
}

// The same seed gives the same head, byte for byte, whatever the number of
// workers and whether the caches were warm; init_seed trains another head
// on the same corpus.
func TestTrainIsDeterministic(t *testing.T) {
	needESpeak(t)
	cache := t.TempDir()
	run := func(workers int, init uint64) []byte {
		cfg := tinyConfig()
		cfg.Workers, cfg.InitSeed = workers, init
		res, err := Train(context.Background(), cfg, testFrontend, t.TempDir(), cache, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(res.Path)
		if err != nil {
			t.Fatal(err)
		}
		if h, err := ww.ReadHead(bytes.NewReader(b)); err != nil || h.Info.Name != "hey_robot" {
			t.Fatalf("head %v: %v", h, err)
		}
		return b
	}
	a := run(2, 0)
	if b := run(1, 0); !bytes.Equal(a, b) {
		t.Error("two runs with one seed made different heads")
	}
	// init_seed changes the head, not the corpus: nothing new is synthesised.
	before, _ := filepath.Glob(filepath.Join(cache, "speech", "*.wav"))
	if c := run(2, 2); bytes.Equal(a, c) {
		t.Error("init_seed 2 made seed 1's head")
	}
	if after, _ := filepath.Glob(filepath.Join(cache, "speech", "*.wav")); len(after) != len(before) {
		t.Errorf("init_seed synthesised %d new clips: the corpus changed", len(after)-len(before))
	}
	if n, _ := filepath.Glob(filepath.Join(cache, "embeddings", "*.emb")); len(n) == 0 {
		t.Error("no embeddings cached")
	}
}

// flite and festival stand in for people: no training or validation
// delivery may use them.
func TestTrainingHearsOnlyESpeak(t *testing.T) {
	needESpeak(t)
	cfg := tinyConfig()
	syn, err := newSynth(filepath.Join(t.TempDir(), "speech"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := buildCorpus(context.Background(), cfg, syn, newProgress(nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, set := range [][]utt{c.pos, c.near, c.speech, c.mine, c.valPos, c.valSpeech, c.valNear} {
		for _, u := range set {
			if u.d.Voice.Engine != "" {
				t.Fatalf("training delivery by %s", u.d.Voice)
			}
		}
	}
}

func TestCrossingsCountsLikeThePicker(t *testing.T) {
	sc := make([]float64, 100)
	sc[10], sc[11], sc[12] = 0.9, 0.95, 0.9 // one utterance
	sc[20] = 0.9                            // within the refractory period
	sc[60] = 0.8                            // a second one
	if n := crossings(sc, 0.7); n != 2 {
		t.Errorf("%d false accepts, want 2", n)
	}
	if n := crossings(sc, 0.85); n != 1 {
		t.Errorf("%d above 0.85, want 1", n)
	}
}

// The speech false accepts are counted on has none of the near-sounds
// that training strings together as hard negatives.
func TestOrdinaryWordsLeaveOutNearSounds(t *testing.T) {
	for _, w := range []string{"robin", "robe", "bot", "boat", "row", "hay", "ray"} {
		if slices.Contains(ordinaryWords, w) {
			t.Errorf("ordinary speech says %q", w)
		}
		if !slices.Contains(words, w) {
			t.Errorf("training speech lacks %q", w)
		}
	}
}
