package wwtrain

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The verifier is trained from the mined towers and leaves them as they
// are; it has a checkpoint of its own, and resuming from the mined
// checkpoint gives the same model as one run.
func TestVerifierStartsFromTheMinedTowers(t *testing.T) {
	needSynths(t)
	dir := t.TempDir()
	cfg := tinyConfig()
	cfg.MineMinutes, cfg.MineClips, cfg.MineEpochs = 0.5, 4, 1
	mined, minedB := train(t, dir, cfg)
	mckpt := filepath.Join(dir, "hey_robot.mined.eaww")
	before, err := os.ReadFile(mckpt)
	if err != nil {
		t.Fatal(err)
	}
	cfg.VerifyEpochs, cfg.VerifyNearWeight = 1, 3
	ver, verB := train(t, dir, cfg)
	n := ver.Net
	if len(n.Verifier) != len(n.Towers) || len(mined.Net.Verifier) != 0 || bytes.Equal(minedB, verB) {
		t.Fatalf("%d verifier towers for %d towers", len(n.Verifier), len(n.Towers))
	}
	for i := range n.Towers {
		if !slices.Equal(n.Towers[i].OutW, mined.Net.Towers[i].OutW) || !slices.Equal(n.Towers[i].Layers[0].W, mined.Net.Towers[i].Layers[0].W) {
			t.Fatalf("tower %d changed", i)
		}
		if slices.Equal(n.Verifier[i].OutW, n.Towers[i].OutW) {
			t.Fatalf("verifier %d is its tower", i)
		}
	}
	v := ver.Report.Verified
	if v == nil || v.Towers != 1 || v.Epochs != 1 || v.PosClips != ver.Report.TrainPosClips || v.NearClips < 1 {
		t.Fatalf("report: verifier %+v", v)
	}
	after, err := os.ReadFile(mckpt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("the verifier rewrote the mined checkpoint")
	}
	for _, f := range []string{"trained", "mined", "verified"} {
		if err := os.Remove(filepath.Join(dir, "hey_robot."+f+".eaww")); err != nil {
			t.Fatal(err)
		}
	}
	if _, freshB := train(t, dir, cfg); !bytes.Equal(verB, freshB) {
		t.Fatal("a verifier from checkpoints and one trained in one run differ")
	}
}

// The verifier learns from the phrase's clips and the near misses' only.
func TestVerifierClips(t *testing.T) {
	ds := &dataset{n: 20, npos: 4, near: [2]int{9, 12}}
	if got, want := verifyClips(ds), []int{0, 1, 2, 3, 9, 10, 11}; !slices.Equal(got, want) {
		t.Fatalf("clips %v, want %v", got, want)
	}
}
