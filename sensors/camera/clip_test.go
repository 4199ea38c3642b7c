package camera

import (
	"context"
	"errors"
	"image/color"
	"testing"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

func TestDetectClipAndAnnotate(t *testing.T) {
	path := mjpegClip(t, "walk.mjpeg", 80, camsim.Config{Width: 160, Height: 120, Seed: 8, Noise: 3,
		Objects: []camsim.Object{{W: 24, H: 40, Y: 40, Speed: 4, Start: 20, Level: 90}}})

	var seen, annotated int
	st, err := DetectClip(context.Background(), clock.Real(), path, motion.DefaultConfig(), func(f *Frame, r motion.Result) error {
		seen++
		if !r.Motion {
			return nil
		}
		img := Annotate(f, r)
		b := r.Boxes[0]
		if img.RGBAAt(b.Min.X, b.Min.Y) != (color.RGBA{255, 0, 0, 255}) {
			t.Fatalf("frame %d: box corner %v not drawn", f.Seq, b.Min)
		}
		// inside the box the picture is untouched (grey)
		if c := img.RGBAAt((b.Min.X+b.Max.X)/2, (b.Min.Y+b.Max.Y)/2); c.R != c.G || c.G != c.B {
			t.Fatalf("frame %d: box interior painted %v", f.Seq, c)
		}
		annotated++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if st.Frames != 80 || seen != 80 || st.Motion != annotated || st.Motion < 40 ||
		st.Calibrating != motion.DefaultConfig().CalibrationFrames || st.Elapsed <= 0 || st.Detect <= 0 || st.Detect > st.Elapsed {
		t.Fatalf("stats %+v, seen %d, annotated %d", st, seen, annotated)
	}
	stop := errors.New("enough")
	if _, err := DetectClip(context.Background(), clock.Real(), path, motion.DefaultConfig(), func(*Frame, motion.Result) error { return stop }); err != stop {
		t.Fatalf("callback error not returned: %v", err)
	}
}
