package motion_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

// videoDir is ../shared/data/video seen from the project root; tests run
// in their package directory, three levels below it.
var videoDir = filepath.Join("..", "..", "..", "..", "shared", "data", "video")

func clip(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(videoDir, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("%s not available (%v); see ../shared/data/README.md", name, err)
	}
	return p
}

// detectClip runs one detector per config over a whole clip, decoding it
// once, and returns for each the per-frame motion flags and whether the
// detector was blind (calibrating).
func detectClip(t testing.TB, path string, cfgs ...motion.Config) (flags, blind [][]bool) {
	t.Helper()
	src, err := camera.OpenFile(path, camera.FileOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ds := make([]*motion.Detector, len(cfgs))
	for i, cfg := range cfgs {
		if ds[i], err = motion.New(cfg); err != nil {
			t.Fatal(err)
		}
	}
	flags, blind = make([][]bool, len(cfgs)), make([][]bool, len(cfgs))
	var f camera.Frame
	for {
		err := src.Next(context.Background(), &f)
		if errors.Is(err, io.EOF) {
			return flags, blind
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range ds {
			r := d.Detect(f.Y, f.YStride, f.Width, f.Height)
			flags[i] = append(flags[i], r.Motion)
			blind[i] = append(blind[i], r.Calibrating)
		}
	}
}

func share(flags []bool) (n int, pct float64) {
	for _, m := range flags {
		if m {
			n++
		}
	}
	return n, 100 * float64(n) / float64(len(flags))
}

func TestVtestHasMotion(t *testing.T) {
	t.Parallel()
	all, _ := detectClip(t, clip(t, "vtest.mjpeg"), motion.DefaultConfig())
	flags := all[0]
	if len(flags) != 797 {
		t.Fatalf("read %d frames, want 797", len(flags))
	}
	n, pct := share(flags[20:])
	t.Logf("vtest: motion in %d of %d frames after the first 20 (%.1f%%)", n, len(flags)-20, pct)
	if pct < 90 {
		t.Fatalf("motion in %.1f%% of frames after the first 20, want ≥ 90%%", pct)
	}
}

// static_lighting with the defaults, and without the lighting
// compensation to show that it is what makes the clip pass: without it the
// detector sees motion or, when the lightning rule resets it, is blind while
// recalibrating, in a large share of the clip.
func TestStaticLightingHasNoMotion(t *testing.T) {
	t.Parallel()
	plain := motion.DefaultConfig()
	plain.CompensateLighting = false
	all, allBlind := detectClip(t, clip(t, "static_lighting.mjpeg"), motion.DefaultConfig(), plain)
	flags, blind := all[0], allBlind[0]
	if len(flags) != 200 {
		t.Fatalf("read %d frames, want 200", len(flags))
	}
	n, pct := share(flags)
	b, _ := share(blind)
	t.Logf("static_lighting: motion in %d of %d frames (%.1f%%), calibrating in %d", n, len(flags), pct, b)
	if pct > 1 {
		t.Errorf("motion in %.1f%% of frames, want ≤ 1%%", pct)
	}
	// No motion because it was blind, recalibrating all the time, would
	// be no better: only the start-up calibration is allowed.
	if b > motion.DefaultConfig().CalibrationFrames+5 {
		t.Errorf("calibrating in %d frames: the lighting swings were not compensated but reset", b)
	}

	bad := make([]bool, len(flags))
	for i := range bad {
		bad[i] = all[1][i] || allBlind[1][i]
	}
	n, _ = share(all[1])
	b, _ = share(allBlind[1])
	_, pct = share(bad[20:])
	t.Logf("static_lighting without compensation: motion in %d, calibrating in %d of %d frames", n, b, len(flags))
	if pct < 25 {
		t.Errorf("without compensation only %.1f%% of frames after the first 20 are motion or blind: the clip no longer tests the compensation", pct)
	}
}

// BenchmarkClip is the detector alone (decode excluded) on each clip's
// frames, in steady state: the clip is played once before measuring and
// then looped. One op is one frame.
func BenchmarkClip(b *testing.B) {
	for _, name := range footageNames {
		b.Run(name, func(b *testing.B) {
			c := footage(b, name)
			d, err := motion.New(motion.DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range c.Frames {
				d.Detect(p, c.W, c.W, c.H)
			}
			b.SetBytes(int64(c.W * c.H))
			b.ReportAllocs()
			cpu0 := motion.ProcessCPU()
			for i := 0; b.Loop(); i++ {
				d.Detect(c.Frames[i%len(c.Frames)], c.W, c.W, c.H)
			}
			if cpu1 := motion.ProcessCPU(); cpu0 >= 0 && cpu1 >= 0 {
				b.ReportMetric(float64(cpu1-cpu0)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
