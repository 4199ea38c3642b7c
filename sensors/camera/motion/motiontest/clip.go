// Package motiontest makes test footage for the motion detector from
// recorded clips: lighting steps and swings that nothing in the scene
// explains, and synthetic moving objects composited on real footage with
// their true boxes. Everything is deterministic (seeded), so tests and the
// Frigate comparison (scripts/motion-vs-frigate.sh) see the same frames.
package motiontest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"

	"github.com/edgeagent/edgeagent/sensors/camera"
	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
	"github.com/edgeagent/edgeagent/sensors/camera/motion"
)

// Clip is a sequence of luma planes, W bytes per row, with optional
// per-frame ground truth.
type Clip struct {
	W, H   int
	Frames [][]byte
	// Truth holds, when not nil, the boxes of everything that moves in
	// each frame (input pixel coordinates).
	Truth [][]image.Rectangle
	// Steps are the frames at which the lighting jumps, if any.
	Steps []int
}

// Load decodes a recorded clip (MJPEG or Y4M) into luma planes.
func Load(ctx context.Context, path string) (*Clip, error) {
	src, err := camera.OpenFile(path, camera.FileOpts{})
	if err != nil {
		return nil, err
	}
	defer src.Close()
	c := &Clip{}
	var f camera.Frame
	for {
		err := src.Next(ctx, &f)
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, camera.ErrBadFrame) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if c.W == 0 {
			c.W, c.H = f.Width, f.Height
		}
		if f.Width != c.W || f.Height != c.H {
			return nil, fmt.Errorf("%s: frame %d is %dx%d, the first was %dx%d", path, f.Seq, f.Width, f.Height, c.W, c.H)
		}
		y := make([]byte, c.W*c.H)
		for r := range c.H {
			copy(y[r*c.W:(r+1)*c.W], f.Y[r*f.YStride:])
		}
		c.Frames = append(c.Frames, y)
	}
	if len(c.Frames) == 0 {
		return nil, fmt.Errorf("%s: no frames", path)
	}
	return c, nil
}

// WriteY4M writes the clip as greyscale YUV4MPEG2 at 10 fps, which
// `edgeagent motion` and OpenCV's ffmpeg backend both read.
func (c *Clip) WriteY4M(w io.Writer) error {
	if _, err := fmt.Fprintf(w, "YUV4MPEG2 W%d H%d F10:1 Ip A1:1 Cmono\n", c.W, c.H); err != nil {
		return err
	}
	for _, y := range c.Frames {
		if _, err := io.WriteString(w, "FRAME\n"); err != nil {
			return err
		}
		if _, err := w.Write(y); err != nil {
			return err
		}
	}
	return nil
}

// WriteTruth writes the clip's ground truth as a JSON array of
// motion.TruthFrame, the file `edgeagent motion --truth` reads.
func (c *Clip) WriteTruth(w io.Writer) error {
	if c.Truth == nil {
		return errors.New("motiontest: the clip has no ground truth")
	}
	out := make([]motion.TruthFrame, len(c.Truth))
	for i, bs := range c.Truth {
		out[i] = motion.TruthFrame{Frame: i, Boxes: make([][4]int, len(bs))}
		for j, b := range bs {
			out[i].Boxes[j] = [4]int{b.Min.X, b.Min.Y, b.Max.X, b.Max.Y}
		}
	}
	enc := json.NewEncoder(w)
	return enc.Encode(out)
}

// gauss returns an approximately normal value of standard deviation sd:
// the sum of four uniform bytes, centred (Irwin–Hall).
func gauss(r *camsim.Rng, sd float64) float64 {
	v := r.Next()
	s := float64(v&0xFF) + float64(v>>8&0xFF) + float64(v>>16&0xFF) + float64(v>>24&0xFF)
	// four uniforms on 0..255: mean 510, sd 255·sqrt(4/12) ≈ 147.2
	return (s - 510) / 147.2 * sd
}
