//go:build !robot

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera/motion/motiontest"
)

// labelledClip makes the labelled test clip: two objects moving over the
// shared static_lighting footage (real, with its lighting swing and
// noise), written as Y4M with its truth file. It skips without the footage.
func labelledClip(t *testing.T) (clip, truth string) {
	t.Helper()
	src := filepath.Join("..", "..", "..", "shared", "data", "video", "static_lighting.mjpeg")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("static_lighting.mjpeg not available (%v); see ../shared/data/README.md", err)
	}
	base, err := motiontest.Load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	c := motiontest.Objects(base, 200, 4)
	dir := t.TempDir()
	clip, truth = filepath.Join(dir, "labelled.y4m"), filepath.Join(dir, "labelled.json")
	for _, w := range []struct {
		path  string
		write func(*os.File) error
	}{
		{clip, func(f *os.File) error { return c.WriteY4M(f) }},
		{truth, func(f *os.File) error { return c.WriteTruth(f) }},
	} {
		f, err := os.Create(w.path)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.write(f); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return clip, truth
}

func TestMotionTruthScoresTheBoxes(t *testing.T) {
	clip, truth := labelledClip(t)
	out, err := run(t, "motion", clip, "--truth", truth, "--json", "--quiet=false")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 201 {
		t.Fatalf("%d lines, want 200 frames and a summary", len(lines))
	}
	var frame struct {
		Frame    int      `json:"frame"`
		BoxedPct *float64 `json:"boxed_pct"`
		Boxes    [][4]int `json:"boxes"`
		Truth    *struct{ TP, FP, FN int }
	}
	if err := json.Unmarshal([]byte(lines[100]), &frame); err != nil {
		t.Fatal(err)
	}
	if frame.Frame != 100 || frame.BoxedPct == nil || *frame.BoxedPct <= 0 || len(frame.Boxes) == 0 || frame.Truth == nil {
		t.Fatalf("frame 100: %s", lines[100])
	}
	var sum struct {
		Summary struct {
			Boxed float64 `json:"boxed_pct_mean"`
			Truth struct {
				Frames            int
				Precision, Recall float64
			}
		}
	}
	if err := json.Unmarshal([]byte(lines[200]), &sum); err != nil {
		t.Fatal(err)
	}
	s := sum.Summary
	t.Logf("labelled clip: %d frames scored, precision %.3f, recall %.3f, boxed %.2f%%", s.Truth.Frames, s.Truth.Precision, s.Truth.Recall, s.Boxed)
	if s.Truth.Frames != 200 {
		t.Errorf("%d frames scored, want 200", s.Truth.Frames)
	}
	// the start-up calibration (10 frames) is inside the first 30, where
	// nothing moves yet: recall is over the frames with something in view
	if s.Truth.Recall < 0.9 {
		t.Errorf("recall %.3f, want ≥ 0.9", s.Truth.Recall)
	}
	if s.Truth.Precision < 0.8 {
		t.Errorf("precision %.3f, want ≥ 0.8", s.Truth.Precision)
	}
}

func TestMotionTruthRejectsBadFiles(t *testing.T) {
	clip, _ := labelledClip(t)
	bad := filepath.Join(t.TempDir(), "bad.json")
	for _, c := range []struct{ content, want string }{
		{`not json at all`, "not JSON"},
		{`[{"frame": 5000, "boxes": []}]`, "none of its frames"},
	} {
		if err := os.WriteFile(bad, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := run(t, "motion", clip, "--truth", bad, "--json=false", "-q")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one saying %q", c.content, err, c.want)
		}
	}
}
