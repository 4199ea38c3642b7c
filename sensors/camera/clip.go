package camera

import (
	"context"
	"errors"
	"image"
	"image/color"
	"image/draw"
	"io"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

// ClipStats sums up a detector run over a clip.
type ClipStats struct {
	Frames      int
	Motion      int           // frames with motion
	Calibrating int           // frames the detector spent (re)calibrating
	Elapsed     time.Duration // reading, decoding and detecting
	Detect      time.Duration // detecting alone
}

// DetectClip runs a detector configured by cfg over a recorded clip (raw
// MJPEG or Y4M) as fast as it can, and calls fn with every frame and its
// result; fn's error stops the run. This is how thresholds and masks are
// tuned on recordings (edgeagent motion). clk dates the frames from the
// start and times the run for the stats.
func DetectClip(ctx context.Context, clk clock.Clock, path string, cfg motion.Config, fn func(f *Frame, r motion.Result) error) (st ClipStats, err error) {
	det, err := motion.New(cfg)
	if err != nil {
		return st, err
	}
	src, err := OpenFile(path, FileOpts{Clock: clk})
	if err != nil {
		return st, err
	}
	defer src.Close()
	start := clk.Now()
	defer func() { st.Elapsed = clk.Since(start) }()
	var f Frame
	for {
		err := src.Next(ctx, &f)
		if errors.Is(err, io.EOF) {
			return st, nil
		}
		if errors.Is(err, ErrBadFrame) {
			continue // counted by its gap in Seq; nothing to detect on
		}
		if err != nil {
			return st, err
		}
		t := clk.Now()
		r := det.Detect(f.Y, f.YStride, f.Width, f.Height)
		st.Detect += clk.Since(t)
		st.Frames++
		if r.Motion {
			st.Motion++
		}
		if r.Calibrating {
			st.Calibrating++
		}
		if fn != nil {
			if err := fn(&f, r); err != nil {
				return st, err
			}
		}
	}
}

// Annotate returns the frame in colour with the boxes drawn on it: red
// for motion, yellow while the detector calibrates.
func Annotate(f *Frame, r motion.Result) *image.RGBA {
	src := f.Image()
	img := image.NewRGBA(src.Bounds())
	draw.Draw(img, img.Bounds(), src, src.Bounds().Min, draw.Src)
	c := color.RGBA{255, 0, 0, 255}
	if r.Calibrating {
		c = color.RGBA{255, 220, 0, 255}
	}
	for _, b := range r.Boxes {
		outline(img, b, c, 2)
	}
	return img
}

func outline(img *image.RGBA, r image.Rectangle, c color.RGBA, width int) {
	r = r.Intersect(img.Bounds())
	if r.Empty() {
		return
	}
	u := image.NewUniform(c)
	for _, e := range []image.Rectangle{
		image.Rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+width),
		image.Rect(r.Min.X, r.Max.Y-width, r.Max.X, r.Max.Y),
		image.Rect(r.Min.X, r.Min.Y, r.Min.X+width, r.Max.Y),
		image.Rect(r.Max.X-width, r.Min.Y, r.Max.X, r.Max.Y),
	} {
		draw.Draw(img, e.Intersect(r), u, image.Point{}, draw.Src)
	}
}
