//go:build gocv

package motion_test

import (
	"image"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera/motion"
	"github.com/edgeagent/edgeagent/sensors/camera/motion/motiontest"
)

type comparison struct {
	frames, agree, goMotion, cvMotion int
	iouSum                            float64
	iouN                              int
}

// compare runs the pure-Go and the OpenCV detectors side by side on every
// frame of a clip.
func compare(t *testing.T, c *motiontest.Clip, cfg motion.Config) comparison {
	t.Helper()
	g, err := motion.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cv, err := motion.NewOpenCV(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	var r comparison
	for _, y := range c.Frames {
		rg := g.Detect(y, c.W, c.W, c.H)
		rc := cv.Detect(y, c.W, c.W, c.H)
		r.frames++
		if rg.Motion == rc.Motion {
			r.agree++
		}
		if rg.Motion {
			r.goMotion++
		}
		if rc.Motion {
			r.cvMotion++
		}
		if rg.Motion && rc.Motion {
			r.iouSum += iou(union(rg.Boxes), union(rc.Boxes))
			r.iouN++
		}
	}
	return r
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
		{"vtest", 0.95, [2]float64{90, 100}},
		{"static_lighting", 0.99, [2]float64{0, 1}},
		{"switch", 0.99, [2]float64{0, 1}},
		{"objects_b", 0.95, [2]float64{80, 95}},
	} {
		t.Run(c.clip, func(t *testing.T) {
			r := compare(t, footage(t, c.clip), motion.DefaultConfig())
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
