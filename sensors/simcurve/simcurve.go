// Package simcurve scripts a physical quantity over time for simulated
// devices: the I2C and GPIO simulators share it, so a board file describes a
// simulated temperature or distance the same way for every bus.
package simcurve

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Curve is a scripted physical quantity over time, measured from the
// moment its device was attached:
//
//	value(t) = points(t) or base
//	         + drift · hours(t)
//	         + amplitude · sin(2π t / period)
//	         + noise · N(0,1)
//	clamped to [min, max]
//
// Points are keyframes joined by straight lines and held flat after the
// last one (or repeated every Repeat). A light level falling at dusk is
//
//	points: [{at: 0s, value: 800}, {at: 5m, value: 800}, {at: 15m, value: 2}]
//
// and a room warming in the sun with a little sensor noise is
//
//	{base: 21, drift: 1.5, amplitude: 0.3, period: 10m, noise: 0.02}
type Curve struct {
	Base      float64       `yaml:"base"`
	Drift     float64       `yaml:"drift"` // per hour
	Amplitude float64       `yaml:"amplitude"`
	Period    time.Duration `yaml:"period"`
	Noise     float64       `yaml:"noise"` // standard deviation
	Points    []Point       `yaml:"points"`
	Repeat    time.Duration `yaml:"repeat"` // period of Points; 0 holds the last value
	Min       *float64      `yaml:"min"`
	Max       *float64      `yaml:"max"`
}

// Point is a keyframe of a Curve.
type Point struct {
	At    time.Duration `yaml:"at"`
	Value float64       `yaml:"value"`
}

// Const is a curve that never changes.
func Const(v float64) Curve { return Curve{Base: v} }

// Validate reports a curve that cannot be evaluated.
func (c Curve) Validate() error {
	if c.Amplitude != 0 && c.Period <= 0 {
		return errors.New("curve: amplitude needs a period > 0")
	}
	if c.Noise < 0 {
		return errors.New("curve: noise must be >= 0")
	}
	for i := 1; i < len(c.Points); i++ {
		if c.Points[i].At <= c.Points[i-1].At {
			return fmt.Errorf("curve: points[%d].at must be after points[%d].at", i, i-1)
		}
	}
	if len(c.Points) > 0 && c.Points[0].At < 0 {
		return errors.New("curve: points[0].at must be >= 0")
	}
	if c.Repeat < 0 || (c.Repeat > 0 && len(c.Points) > 0 && c.Repeat < c.Points[len(c.Points)-1].At) {
		return errors.New("curve: repeat must cover the last point")
	}
	if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
		return errors.New("curve: min > max")
	}
	return nil
}

// At is the noise-free value at elapsed time t.
func (c *Curve) At(t time.Duration) float64 {
	v := c.Base
	if len(c.Points) > 0 {
		v = c.points(t)
	}
	v += c.Drift * t.Hours()
	if c.Amplitude != 0 && c.Period > 0 {
		v += c.Amplitude * math.Sin(2*math.Pi*float64(t)/float64(c.Period))
	}
	return c.clamp(v)
}

// Sample is At plus the curve's noise drawn from rng.
func (c *Curve) Sample(t time.Duration, rng *rand.Rand) float64 {
	v := c.At(t)
	if c.Noise > 0 && rng != nil {
		v = c.clamp(v + c.Noise*rng.NormFloat64())
	}
	return v
}

func (c *Curve) clamp(v float64) float64 {
	if c.Min != nil && v < *c.Min {
		v = *c.Min
	}
	if c.Max != nil && v > *c.Max {
		v = *c.Max
	}
	return v
}

func (c *Curve) points(t time.Duration) float64 {
	p := c.Points
	if c.Repeat > 0 {
		t %= c.Repeat
	}
	if t <= p[0].At {
		return p[0].Value
	}
	for i := 1; i < len(p); i++ {
		if t <= p[i].At {
			a, b := p[i-1], p[i]
			f := float64(t-a.At) / float64(b.At-a.At)
			return a.Value + f*(b.Value-a.Value)
		}
	}
	return p[len(p)-1].Value
}

// NewRNG returns the deterministic noise source of a device, so a sim run
// is reproducible.
func NewRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }
