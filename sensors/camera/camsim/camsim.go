// Package camsim renders a deterministic synthetic camera scene: a
// textured static background, textured objects that enter on one side and
// leave on the other, temporal sensor noise, slow lighting drift and an
// optional sudden brightness jump. Frame i depends only on the Config and
// i, so tests can ask for any frame and know where every object is.
//
// It is the fake behind the camera's "sim" source (the sim board) and the
// ground truth for the motion detector's synthetic tests.
package camsim

import (
	"fmt"
	"image"
	"math"
)

// Object is a textured rectangle moving horizontally across the scene.
type Object struct {
	W, H   int     // size in pixels
	Y      int     // top row
	Speed  float64 // pixels per frame; negative moves right to left
	Start  int     // frame at which it starts entering
	Period int     // frames between successive entries; 0: it crosses once
	Level  uint8   // mean luma of its texture
}

// Config describes a scene.
type Config struct {
	Width, Height int
	Seed          uint64
	Noise         float64 // temporal noise, uniform in ±Noise luma levels
	Drift         float64 // lighting gain swings by ±Drift (0.1 = ±10 %) ...
	DriftPeriod   int     // ... over this many frames (0: no drift)
	Objects       []Object
	// From frame JumpAt on (if > 0), every pixel becomes v·JumpGain +
	// JumpOffset: a light switched on.
	JumpAt     int
	JumpGain   float64
	JumpOffset float64
}

// Scene renders frames of one Config.
type Scene struct {
	cfg Config
	bg  []uint8
	tex [][]uint8 // per object
}

// New builds the scene's background and object textures.
func New(cfg Config) (*Scene, error) {
	if cfg.Width < 8 || cfg.Height < 8 || cfg.Width > 8192 || cfg.Height > 8192 {
		return nil, fmt.Errorf("camsim: size %dx%d out of range", cfg.Width, cfg.Height)
	}
	for i, o := range cfg.Objects {
		if o.W < 1 || o.H < 1 || o.Speed == 0 || o.Period < 0 {
			return nil, fmt.Errorf("camsim: object %d: want positive size, non-zero speed, period ≥ 0", i)
		}
	}
	if cfg.JumpAt > 0 && cfg.JumpGain == 0 {
		cfg.JumpGain = 1
	}
	s := &Scene{cfg: cfg}
	s.bg = background(cfg.Width, cfg.Height, cfg.Seed)
	for i, o := range cfg.Objects {
		s.tex = append(s.tex, texture(o.W, o.H, o.Level, cfg.Seed+uint64(i)*7919+1))
	}
	return s, nil
}

// Config returns the scene's configuration.
func (s *Scene) Config() Config { return s.cfg }

// Rng is xorshift64*: tiny, fast and deterministic, the same on every
// platform (motiontest makes its clips with it too).
type Rng uint64

// Next is the next pseudo-random value.
func (r *Rng) Next() uint64 {
	x := uint64(*r)
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	*r = Rng(x)
	return x * 2685821657736338717
}

func seeded(seed uint64) Rng {
	r := Rng(seed*0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D)
	if r == 0 {
		r = 1
	}
	r.Next()
	return r
}

// background: a vertical gradient (sky to ground), a few flat blocks
// (buildings) with edges, and fine texture, so that the scene has the
// structure a real one has and a blur does not flatten it.
func background(w, h int, seed uint64) []uint8 {
	r := seeded(seed)
	f := make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			f[y*w+x] = 70 + 80*float64(y)/float64(h)
		}
	}
	for b := 0; b < 12; b++ {
		bw := 8 + int(r.Next()%uint64(w/3+1))
		bh := 8 + int(r.Next()%uint64(h/3+1))
		x0 := int(r.Next() % uint64(w))
		y0 := int(r.Next() % uint64(h))
		lvl := float64(int(r.Next()%100)) - 50
		for y := y0; y < min(h, y0+bh); y++ {
			for x := x0; x < min(w, x0+bw); x++ {
				f[y*w+x] += lvl
			}
		}
	}
	out := make([]uint8, w*h)
	for i := range f {
		v := f[i] + float64(int(r.Next()%25)) - 12
		out[i] = Clamp8(v)
	}
	return out
}

// texture: a coarse checkerboard around level with fine grain, so that an
// object differs from any background it crosses.
func texture(w, h int, level uint8, seed uint64) []uint8 {
	r := seeded(seed)
	out := make([]uint8, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := float64(level)
			if (x/6+y/6)%2 == 0 {
				v += 35
			} else {
				v -= 35
			}
			v += float64(int(r.Next()%17)) - 8
			out[y*w+x] = Clamp8(v)
		}
	}
	return out
}

// Clamp8 rounds v to a pixel value, 0..255.
func Clamp8(v float64) uint8 {
	if v <= 0 {
		return 0
	}
	if v >= 255 {
		return 255
	}
	return uint8(v + 0.5)
}

// pos returns object o's left edge at frame i and whether it is in view.
func (s *Scene) pos(o Object, i int) (int, bool) {
	t := i - o.Start
	if t < 0 {
		return 0, false
	}
	travel := float64(s.cfg.Width + o.W)
	dur := int(math.Ceil(travel / math.Abs(o.Speed)))
	if o.Period > 0 {
		t %= max(o.Period, dur)
	} else if t >= dur {
		return 0, false
	}
	d := float64(t) * math.Abs(o.Speed)
	if d >= travel {
		return 0, false
	}
	x := -o.W + int(d)
	if o.Speed < 0 {
		x = s.cfg.Width - int(d)
	}
	return x, true
}

// Boxes appends the visible part of every object in frame i to dst.
func (s *Scene) Boxes(i int, dst []image.Rectangle) []image.Rectangle {
	frame := image.Rect(0, 0, s.cfg.Width, s.cfg.Height)
	for _, o := range s.cfg.Objects {
		x, ok := s.pos(o, i)
		if !ok {
			continue
		}
		r := image.Rect(x, o.Y, x+o.W, o.Y+o.H).Intersect(frame)
		if !r.Empty() {
			dst = append(dst, r)
		}
	}
	return dst
}

// Gain returns the lighting gain and offset applied to frame i.
func (s *Scene) Gain(i int) (gain, offset float64) {
	gain = 1
	if s.cfg.DriftPeriod > 0 {
		gain += s.cfg.Drift * math.Sin(2*math.Pi*float64(i)/float64(s.cfg.DriftPeriod))
	}
	if s.cfg.JumpAt > 0 && i >= s.cfg.JumpAt {
		return gain * s.cfg.JumpGain, s.cfg.JumpOffset
	}
	return gain, 0
}

// Render writes frame i's luma into y (stride = width), which must hold
// Width×Height bytes.
func (s *Scene) Render(i int, y []byte) {
	w, h := s.cfg.Width, s.cfg.Height
	y = y[:w*h]
	copy(y, s.bg)
	for k, o := range s.cfg.Objects {
		x, ok := s.pos(o, i)
		if !ok {
			continue
		}
		tex := s.tex[k]
		for ty := 0; ty < o.H; ty++ {
			py := o.Y + ty
			if py < 0 || py >= h {
				continue
			}
			for tx := 0; tx < o.W; tx++ {
				px := x + tx
				if px < 0 || px >= w {
					continue
				}
				y[py*w+px] = tex[ty*o.W+tx]
			}
		}
	}
	gain, offset := s.Gain(i)
	g, off := int32(gain*256+0.5), int32(offset*256)
	noise := int32(s.cfg.Noise*256 + 0.5)
	r := seeded(s.cfg.Seed ^ uint64(i+1)*0xD1B54A32D192ED03)
	var bits uint64
	for p, v := range y {
		acc := int32(v)*g + off
		if noise > 0 {
			if p%4 == 0 {
				bits = r.Next()
			}
			u := int32(bits & 0xFFFF) // uniform 0..65535
			bits >>= 16
			acc += (u - 32768) * noise >> 15
		}
		acc = (acc + 128) >> 8
		if acc < 0 {
			acc = 0
		} else if acc > 255 {
			acc = 255
		}
		y[p] = uint8(acc)
	}
}
