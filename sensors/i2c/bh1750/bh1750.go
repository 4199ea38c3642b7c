// Package bh1750 is the "bh1750" sensor kind: a ROHM ambient light sensor
// read through periph.io's bh1750 driver. Reading: <name>.illuminance (lx).
//
// Sample block:
//
//	sensors:
//	  - name: light
//	    kind: bh1750
//	    bus: "1"
//	    address: 0x23           # 0x5c when ADDR is high
//	    interval: 2s
//	    thresholds:
//	      - {quantity: illuminance, below: 10, hysteresis: 5, priority: normal, event: dark}
//	    options:
//	      resolution: high      # high (1 lx, 120 ms) | high2 (0.5 lx, 120 ms) | low (4 lx, 16 ms)
//	      sim:
//	        # dusk: daylight for 5 minutes, dark 10 minutes later
//	        illuminance: {points: [{at: 0s, value: 800}, {at: 5m, value: 800}, {at: 15m, value: 2}]}
//
// Range 0–54612 lx at 1 lx; direct sunlight saturates it.
package bh1750

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/bh1750"
)

func init() { sensors.Register("bh1750", New) }

// Opts is the options block.
type Opts struct {
	Resolution string          `yaml:"resolution"`
	Retry      sensors.Backoff `yaml:"retry"`
	Sim        *Sim            `yaml:"sim"`
}

// Sim is the simulated light.
type Sim struct {
	Illuminance i2csim.Curve         `yaml:"illuminance"` // lx
	Faults      []i2csim.FaultWindow `yaml:"faults"`
}

// defaultSim: an indoor room whose light dims at dusk, repeating every 30
// minutes so a long sim run keeps crossing a "dark" threshold.
var defaultSim = Sim{Illuminance: i2csim.Curve{
	Points: []i2csim.Point{{At: 0, Value: 420}, {At: 10 * time.Minute, Value: 420}, {At: 20 * time.Minute, Value: 3}, {At: 25 * time.Minute, Value: 3}, {At: 30 * time.Minute, Value: 420}},
	Repeat: 30 * time.Minute, Noise: 0.5, Min: new(0.0),
}}

var resolutions = map[string]bh1750.Resolution{
	"high":  bh1750.ContinuousHighResMode,
	"high2": bh1750.ContinuousHighResMode2,
	"low":   bh1750.ContinuousLowResMode,
}

// New builds a bh1750 sensor.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	opts := Opts{Resolution: "high"}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	cfg.Address = i2ckit.Address(cfg, bh1750.I2CAddr)
	var errs []error
	if cfg.Address != bh1750.I2CAddr && cfg.Address != bh1750.AlternativeI2CAddr {
		errs = append(errs, fmt.Errorf("address %#x: a BH1750 answers at 0x23 or 0x5c only", cfg.Address))
	}
	res, ok := resolutions[opts.Resolution]
	if !ok {
		errs = append(errs, errors.New("options.resolution: not high, high2 or low"))
	}
	sim := defaultSim
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	errs = append(errs, i2ckit.CheckSim(map[string]i2csim.Curve{"illuminance": sim.Illuminance}, sim.Faults)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	k := &kind{cfg: cfg, res: res, source: cfg.Name + ".illuminance"}
	return &i2ckit.Loop{
		// The driver waits out one measurement (up to 140 ms) per sample.
		Cfg: cfg, Interval: 2 * time.Second, Min: 150 * time.Millisecond, Backoff: opts.Retry, Open: k.open,
		Sim: func() (i2csim.Device, []i2csim.FaultWindow, error) {
			return i2csim.NewBH1750(i2csim.BH1750Config{Illuminance: sim.Illuminance}), sim.Faults, nil
		},
	}, nil
}

type kind struct {
	cfg    sensors.Config
	res    bh1750.Resolution
	source string
}

func (k *kind) open(_ context.Context, bus i2c.Bus) (i2ckit.Device, error) {
	d, err := bh1750.NewI2C(bus, k.cfg.Address)
	if err != nil {
		return nil, err
	}
	if err := d.SetResolution(k.res); err != nil {
		return nil, err
	}
	return i2ckit.Driver[*bh1750.Dev]{Dev: d, Read: k.sample, Halt: (*bh1750.Dev).Halt}, nil
}

func (k *kind) sample(_ context.Context, d *bh1750.Dev, e *i2ckit.Emitter) error {
	v, err := d.Sense()
	if err != nil {
		return err
	}
	lx := float64(v) / float64(physic.Lumen)
	if k.res == bh1750.ContinuousHighResMode2 {
		// In H-resolution mode 2 a count is 0.5 lx, but periph divides
		// every mode's count by 1.2 only.
		lx /= 2
	}
	e.Reading(k.source, lx, "lx")
	return nil
}
