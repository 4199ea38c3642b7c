//go:build !robot

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --check exits non-zero (errDiverged) when the agent does something else:
// here the e-stop recording replayed into the threshold scenario's board.
func TestReplayCheck(t *testing.T) {
	f := filepath.Join(scenarioDir, "estop.mcap")
	out, err := run(t, "replay", f, "--as-fast-as-possible", "--check", "--board", "")
	if err != nil || !strings.Contains(out, "identical") {
		t.Fatalf("%v\n%s", err, out)
	}
	rec := filepath.Join(t.TempDir(), "again.mcap")
	out, err = run(t, "replay", f, "--as-fast-as-possible", "--check", "--out", rec, "--board", filepath.Join(scenarioDir, "threshold.yaml"))
	if !errors.Is(err, errDiverged) || !strings.Contains(out, "DIVERGED at") {
		t.Fatalf("err %v, want errDiverged\n%s", err, out)
	}
	if _, err := os.Stat(rec); err != nil {
		t.Errorf("--out: %v", err)
	}
	if _, err := run(t, "replay", f, "--speed", "0", "--as-fast-as-possible=false", "--out", ""); err == nil {
		t.Error("--speed 0 accepted")
	}
}

// --detections detectors runs the recorded frames through the motion
// detector of the board given: a higher threshold moves the motion events,
// which the report shows and --check fails on.
func TestReplayDetectors(t *testing.T) {
	replay, _, err := rootCmd.Find([]string{"replay"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = replay.Flags().Set("detections", "recorded") })
	f := filepath.Join(scenarioDir, "motion-detect.mcap")
	out, err := run(t, "replay", f, "--as-fast-as-possible", "--check", "--board", "", "--detections", "detectors")
	if err != nil || !strings.Contains(out, "cam              5") || !strings.Contains(out, "motion_start recorded 1 replayed 1") {
		t.Fatalf("%v\n%s", err, out)
	}
	y, err := os.ReadFile(filepath.Join(scenarioDir, "motion-detect.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(t.TempDir(), "b.yaml")
	if err := os.WriteFile(b, bytes.Replace(y, []byte("threshold: 30"), []byte("threshold: 250"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, "replay", f, "--as-fast-as-possible", "--check", "--board", b, "--detections", "detectors")
	if !errors.Is(err, errDiverged) || !strings.Contains(out, "DETECTIONS DIFFER for cam") || !strings.Contains(out, "- recorded only  motion_start at +") {
		t.Fatalf("err %v, want errDiverged\n%s", err, out)
	}
	if _, err := run(t, "replay", filepath.Join(scenarioDir, "estop.mcap"), "--board", "", "--detections", "both"); err == nil {
		t.Error("--detections both accepted")
	}
}
