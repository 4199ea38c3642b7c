package motiontest

import (
	"image"

	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

// Appear is the frame at which Objects' objects appear.
const Appear = 30

// object is a textured rectangle bouncing around inside the frame.
type object struct {
	w, h   int
	x, y   float64
	vx, vy float64
	tex    []byte // w×h, moves with the object
}

// Objects returns base (looping, n frames) with two textured objects of
// about a person's size moving through it from frame Appear on (after a
// detector's start-up calibration), never overlapping, always whole in
// view, and their boxes as ground truth. base should show a still scene:
// anything moving in it is motion the truth does not know.
func Objects(base *Clip, n int, seed uint64) *Clip {
	r := camsim.Rng(seed | 1)
	W, H := base.W, base.H
	objs := []*object{
		newObject(&r, W/10, H/4, 0.1*float64(W), 0.08*float64(H), float64(W)/110, 0.4, 70),
		newObject(&r, W/8, H/5, 0.7*float64(W), 0.6*float64(H), -float64(W)/90, -float64(H)/300, 190),
	}
	c := &Clip{W: W, H: H, Frames: make([][]byte, n), Truth: make([][]image.Rectangle, n), Steps: base.Steps}
	for i := range n {
		dst := append([]byte(nil), base.Frames[i%len(base.Frames)]...)
		c.Frames[i] = dst
		if i < Appear {
			continue
		}
		for k, o := range objs {
			b := o.box()
			for y := range o.h {
				copy(dst[(b.Min.Y+y)*W+b.Min.X:][:o.w], o.tex[y*o.w:(y+1)*o.w])
			}
			c.Truth[i] = append(c.Truth[i], b)
			o.step(W, H, k == 0)
		}
	}
	return c
}

func newObject(r *camsim.Rng, w, h int, x, y, vx, vy float64, level int) *object {
	o := &object{w: w, h: h, x: x, y: y, vx: vx, vy: vy, tex: make([]byte, w*h)}
	for j := range h {
		for i := range w {
			// horizontal bands (a shirt, trousers) and a fine texture
			band := 25.0
			if (j*6/h)%2 == 1 {
				band = -25
			}
			o.tex[j*w+i] = camsim.Clamp8(float64(level) + band + gauss(r, 10))
		}
	}
	return o
}

func (o *object) box() image.Rectangle {
	x, y := int(o.x+0.5), int(o.y+0.5)
	return image.Rect(x, y, x+o.w, y+o.h)
}

// step moves the object, bouncing off the frame's edges (the upper one
// keeps to the upper half, the lower one to the lower half, so that they
// never overlap).
func (o *object) step(W, H int, upper bool) {
	lo, hi := 0.0, float64(H/2-o.h)
	if !upper {
		lo, hi = float64(H/2), float64(H-o.h)
	}
	o.x += o.vx
	if o.x < 0 || o.x > float64(W-o.w) {
		o.vx = -o.vx
		o.x = min(max(o.x, 0), float64(W-o.w))
	}
	o.y += o.vy
	if o.y < lo || o.y > hi {
		o.vy = -o.vy
		o.y = min(max(o.y, lo), hi)
	}
}
