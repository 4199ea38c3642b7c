package camera

import (
	"context"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

// simSource renders the camsim scene: what the sim board's camera sees.
// Someone walks through the view every Sim.Every, so the motion detector,
// its events and the agent's reaction to them can be watched on a laptop.
type simSource struct {
	scene    *camsim.Scene
	pace     bool
	interval time.Duration
	clock    clock.Clock // the scene's frames are due on it
	start    time.Time
	seq      uint64
	w, h     int
}

func simConfig(o Opts) camsim.Config {
	w, h := o.Width, o.Height
	period := int(o.Sim.Every.Seconds() * o.FPS)
	cross := 6 * o.FPS // frames an object takes to cross
	cfg := camsim.Config{Width: w, Height: h, Seed: o.Sim.Seed, Noise: o.Sim.Noise}
	if o.Sim.DriftPeriod > 0 && o.Sim.Drift > 0 {
		cfg.Drift = o.Sim.Drift
		cfg.DriftPeriod = max(1, int(o.Sim.DriftPeriod.Seconds()*o.FPS))
	}
	n := o.Sim.Objects
	for k := 0; k < n; k++ {
		ow, oh := max(4, w/8), max(4, h*2/5)
		speed := float64(w+ow) / cross
		if k%2 == 1 {
			speed = -speed // every other one walks the other way
		}
		cfg.Objects = append(cfg.Objects, camsim.Object{
			W: ow, H: oh,
			Y:      h*45/100 + (h/10)*(k%3) - oh/4,
			Speed:  speed,
			Start:  int(2*o.FPS) + k*period/max(n, 1),
			Period: max(period, int(cross)+1),
			Level:  uint8(90 + 40*(k%3)),
		})
	}
	return cfg
}

func openSim(o Opts, clk clock.Clock) (Source, error) {
	scene, err := camsim.New(simConfig(o))
	if err != nil {
		return nil, asConfigError(err)
	}
	return &simSource{
		scene:    scene,
		pace:     o.Pace,
		interval: time.Duration(float64(time.Second) / o.FPS),
		clock:    clk,
		start:    clk.Now(),
		w:        o.Width, h: o.Height,
	}, nil
}

func (s *simSource) Next(ctx context.Context, f *Frame) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.pace {
		due := s.start.Add(time.Duration(s.seq) * s.interval)
		if wait := due.Sub(s.clock.Now()); wait > 0 {
			if err := clock.Sleep(ctx, s.clock, wait); err != nil {
				return err
			}
		} else {
			// Behind: skip to the frame that is due now, as a camera
			// would (the skipped ones are drops).
			s.seq += uint64(-wait / s.interval)
		}
	}
	buf := f.grow(s.w * s.h)
	s.scene.Render(int(s.seq), buf)
	f.Seq = s.seq
	f.Time = s.start.Add(time.Duration(s.seq) * s.interval)
	f.Width, f.Height = s.w, s.h
	f.Y, f.YStride = buf, s.w
	f.Cb, f.Cr, f.CStride = nil, nil, 0
	f.JPEG = nil
	s.seq++
	return nil
}

func (s *simSource) Close() error { return nil }
