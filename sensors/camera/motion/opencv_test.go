//go:build gocv

package motion_test

import (
	"context"
	"errors"
	"image"
	"io"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

type comparison struct {
	frames, agree, goMotion, cvMotion int
	iouSum                            float64
	iouN                              int
}

// compare runs the pure-Go and the OpenCV detectors side by side on every
// frame of a clip.
func compare(t *testing.T, path string, cfg motion.Config) comparison {
	t.Helper()
	src, err := camera.OpenFile(path, camera.FileOpts{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	g, err := motion.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := motion.NewOpenCV(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	var c comparison
	var f camera.Frame
	for {
		err := src.Next(context.Background(), &f)
		if errors.Is(err, io.EOF) {
			return c
		}
		if err != nil {
			t.Fatal(err)
		}
		rg := g.Detect(f.Y, f.YStride, f.Width, f.Height)
		rc := cv.Detect(f.Y, f.YStride, f.Width, f.Height)
		c.frames++
		if rg.Motion == rc.Motion {
			c.agree++
		}
		if rg.Motion {
			c.goMotion++
		}
		if rc.Motion {
			c.cvMotion++
		}
		if rg.Motion && rc.Motion {
			c.iouSum += iou(union(rg.Boxes), union(rc.Boxes))
			c.iouN++
		}
	}
}

func union(rs []image.Rectangle) image.Rectangle {
	var u image.Rectangle
	for _, r := range rs {
		u = u.Union(r)
	}
	return u
}

func iou(a, b image.Rectangle) float64 {
	i := a.Intersect(b)
	ai := float64(i.Dx() * i.Dy())
	au := float64(a.Dx()*a.Dy()+b.Dx()*b.Dy()) - ai
	if au == 0 {
		return 1
	}
	return ai / au
}

func TestOpenCVAgreesWithGo(t *testing.T) {
	for _, c := range []struct {
		clip        string
		minAgree    float64
		cvMotionPct [2]float64 // bounds on the OpenCV detector's motion share
	}{
		{"vtest.mjpeg", 0.95, [2]float64{90, 100}},
		{"static_lighting.mjpeg", 0.99, [2]float64{0, 1}},
	} {
		t.Run(c.clip, func(t *testing.T) {
			r := compare(t, clip(t, c.clip), motion.DefaultConfig())
			agree := float64(r.agree) / float64(r.frames)
			pct := 100 * float64(r.cvMotion) / float64(r.frames)
			meanIoU := 0.0
			if r.iouN > 0 {
				meanIoU = r.iouSum / float64(r.iouN)
			}
			t.Logf("%s: %d frames, motion Go %d / OpenCV %d, same verdict on %.1f%%, mean IoU of the boxes %.2f",
				c.clip, r.frames, r.goMotion, r.cvMotion, 100*agree, meanIoU)
			if agree < c.minAgree {
				t.Errorf("same verdict on %.1f%% of frames, want ≥ %.0f%%", 100*agree, 100*c.minAgree)
			}
			if pct < c.cvMotionPct[0] || pct > c.cvMotionPct[1] {
				t.Errorf("OpenCV detector: motion in %.1f%% of frames, want %v", pct, c.cvMotionPct)
			}
			if r.iouN > 0 && meanIoU < 0.7 {
				t.Errorf("boxes overlap by %.2f (IoU) on average, want ≥ 0.7", meanIoU)
			}
		})
	}
}
