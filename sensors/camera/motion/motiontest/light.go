package motiontest

import (
	"image"
	"math"

	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

// LightSwitch returns n frames of base under lights switched on and off:
// every 50 frames the lighting steps (darker, back, brighter with clipping,
// back, a lamp lighting the left of the scene, dimmer), after each step
// the camera's auto-exposure takes back a quarter of it over about 15
// frames, and every pixel gets temporal noise of sd 3. With still, the
// first frame of base is held, so that nothing in view moves; otherwise
// base plays (looping), so that things move through the light steps, and
// base's ground truth, if any, carries over.
func LightSwitch(base *Clip, n int, still bool, seed uint64) *Clip {
	levels := []float64{1, 0.55, 1, 1.45, 1, 0.7}
	lamp := 4 // the segment lit by a lamp on the left
	c := &Clip{W: base.W, H: base.H, Frames: make([][]byte, n)}
	if base.Truth != nil && !still {
		c.Truth = make([][]image.Rectangle, n)
		for i := range c.Truth {
			c.Truth[i] = base.Truth[i%len(base.Truth)]
		}
	}
	r := camsim.Rng(seed | 1)
	field := make([]float64, base.W*base.H)
	for y := range base.H {
		for x := range base.W {
			dx, dy := float64(x)-0.25*float64(base.W), float64(y)-0.4*float64(base.H)
			s := 0.2 * float64(base.W)
			field[y*base.W+x] = 0.5 * math.Exp(-(dx*dx+dy*dy)/(2*s*s))
		}
	}
	for i := range n {
		seg, t := (i/50)%len(levels), i%50
		if i >= 50 && t == 0 {
			c.Steps = append(c.Steps, i)
		}
		g := 1 + (levels[seg]-1)*(0.75+0.25*math.Exp(-float64(t)/6))
		src := base.Frames[0]
		if !still {
			src = base.Frames[i%len(base.Frames)]
		}
		dst := make([]byte, len(src))
		for p, v := range src {
			k := g
			if seg == lamp {
				k += field[p]
			}
			dst[p] = camsim.Clamp8(float64(v)*k + gauss(&r, 3))
		}
		c.Frames[i] = dst
	}
	return c
}

// Swing returns base with its brightness swinging by ±amp (a fraction)
// over period frames, as clouds or an auto-exposure hunting do, plus
// temporal noise of sd noise.
func Swing(base *Clip, amp float64, period int, noise float64, seed uint64) *Clip {
	c := &Clip{W: base.W, H: base.H, Frames: make([][]byte, len(base.Frames))}
	r := camsim.Rng(seed | 1)
	for i, src := range base.Frames {
		g := 1 + amp*math.Sin(2*math.Pi*float64(i)/float64(period))
		dst := make([]byte, len(src))
		for p, v := range src {
			dst[p] = camsim.Clamp8(float64(v)*g + gauss(&r, noise))
		}
		c.Frames[i] = dst
	}
	return c
}
