package motion_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera/motion"
	"github.com/edgeagent/edgeagent/sensors/camera/motion/motiontest"
)

// quality is what a detector made of one clip.
type quality struct {
	frames, motion, blind int
	// blindAfterStep is the most frames spent calibrating within 50 frames
	// of one of the clip's light steps.
	blindAfterStep int
	boxedPct       float64 // mean share of the frame inside a box
	score          motion.Score
}

// settle is how many frames at the start count as the start-up calibration,
// left out of the false alarms and the score.
const settle = 20

func evalClip(c *motiontest.Clip, cfg motion.Config) quality {
	d, err := motion.New(cfg)
	if err != nil {
		panic(err)
	}
	var q quality
	blind := make([]bool, len(c.Frames))
	boxed := 0
	for i, p := range c.Frames {
		r := d.Detect(p, c.W, c.W, c.H)
		q.frames++
		blind[i] = r.Calibrating
		if r.Calibrating {
			q.blind++
		}
		if i < settle {
			continue
		}
		if r.Motion {
			q.motion++
		}
		boxed += motion.UnionArea(r.Boxes)
		if c.Truth != nil {
			q.score.Add(r.Boxes, c.Truth[i], 0.3)
		}
	}
	q.boxedPct = 100 * float64(boxed) / float64((len(c.Frames)-settle)*c.W*c.H)
	for _, s := range c.Steps {
		n := 0
		for _, b := range blind[s:min(s+50, len(blind))] {
			if b {
				n++
			}
		}
		q.blindAfterStep = max(q.blindAfterStep, n)
	}
	return q
}

func (q quality) String() string {
	s := fmt.Sprintf("motion %3d/%d, blind %3d (≤ %2d after a step), boxed %5.2f%%", q.motion, q.frames-settle, q.blind, q.blindAfterStep, q.boxedPct)
	if q.score.TP+q.score.FN > 0 {
		s += fmt.Sprintf(", precision %.3f recall %.3f", q.score.Precision(), q.score.Recall())
	}
	return s
}

// TestFootageQuality checks the budgets of issue 17 on every clip, with
// the lighting compensation on (the default) and, for comparison, off.
func TestFootageQuality(t *testing.T) {
	off := motion.DefaultConfig()
	off.CompensateLighting = false
	var table strings.Builder
	res := map[string][2]quality{}
	for _, name := range footageNames {
		c := footage(t, name)
		on, no := evalClip(c, motion.DefaultConfig()), evalClip(c, off)
		res[name] = [2]quality{on, no}
		fmt.Fprintf(&table, "\n%-16s on:  %v\n%-16s off: %v", name, on, "", no)
	}
	t.Log(table.String())
	for _, name := range []string{"static_lighting", "switch"} {
		if q := res[name][0]; q.motion != 0 {
			t.Errorf("%s: motion in %d frames of a still scene", name, q.motion)
		}
	}
	for _, name := range []string{"switch", "switch_walk", "objects_b"} {
		if q := res[name][0]; q.blindAfterStep > 10 {
			t.Errorf("%s: blind for %d frames after a light step, want ≤ 10", name, q.blindAfterStep)
		}
	}
	for _, name := range []string{"vtest", "swing"} {
		if on, no := res[name][0], res[name][1]; on.boxedPct > no.boxedPct {
			t.Errorf("%s: boxes cover %.2f%% of the frame with compensation, %.2f%% without", name, on.boxedPct, no.boxedPct)
		}
	}
	// objects_a is the labelled clip of the budget. objects_b adds
	// five light steps, after each of which the detector is blind for a
	// few frames (counted as misses): 0.85 there.
	for name, want := range map[string]float64{"objects_a": 0.9, "objects_b": 0.85} {
		if q := res[name][0]; q.score.Recall() < want {
			t.Errorf("%s: box recall %.3f at IoU ≥ 0.3, want ≥ %.2f", name, q.score.Recall(), want)
		}
	}
	if q := res["vtest"][0]; float64(q.motion) < 0.9*float64(q.frames-settle) {
		t.Errorf("vtest: motion in only %d of %d frames", q.motion, q.frames-settle)
	}
}
