// Package pir is the "pir" sensor kind: a passive infrared motion module
// (HC-SR501, AM312, Panasonic EKMC) on a GPIO input. Motion raises the
// High-priority event motion_start, like camera motion, so the agent is
// interrupted at once; motion_end (Low) follows when the module's output
// drops. The reading <name>.motion is 1 while motion is reported, else 0.
//
// Sample block (Raspberry Pi, module OUT on header pin 11 = GPIO17):
//
//	sensors:
//	  - name: hall_pir
//	    kind: pir
//	    pins: {signal: "11"}
//	    options:
//	      pull: down          # the module drives the line; the pull keeps an unplugged input low
//	      debounce: 50ms
//	      warmup: 60s         # an HC-SR501 triggers at random for about a minute after power-up
//	      sim:                # platform sim: when someone walks by
//	        motion: [{after: 20s, for: 4s, every: 45s}]
//
// The HC-SR501 has its own hold time (the Tx potentiometer, 0.3 s – 5 min)
// and retrigger jumper: motion_end comes when that time runs out.
package pir

import (
	"errors"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiokit"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/gpio"
)

func init() { sensors.Register("pir", New) }

// Opts is the options block.
type Opts struct {
	Pull      string          `yaml:"pull"`
	ActiveLow bool            `yaml:"active_low"`
	Debounce  time.Duration   `yaml:"debounce"`
	Warmup    time.Duration   `yaml:"warmup"`
	Retry     sensors.Backoff `yaml:"retry"`
	Sim       *Sim            `yaml:"sim"`
}

// Sim scripts the motion seen on platform sim.
type Sim struct {
	Motion []gpiosim.Window `yaml:"motion"`
}

// New builds a pir sensor.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	opts := Opts{Pull: "down", Debounce: 50 * time.Millisecond}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var errs []error
	pull, err := gpiokit.ParsePull(opts.Pull)
	if err != nil {
		errs = append(errs, fmt.Errorf("options.%w", err))
	}
	if cfg.Pins["signal"] == "" {
		errs = append(errs, errors.New("pins.signal: required (the header pin the module's OUT is wired to)"))
	}
	for k := range cfg.Pins {
		if k != "signal" {
			errs = append(errs, errors.New("pins: a role pir does not have (it has only signal)"))
		}
	}
	if opts.Debounce < 0 || opts.Warmup < 0 {
		errs = append(errs, errors.New("options: debounce and warmup must be >= 0"))
	}
	sim := Sim{Motion: []gpiosim.Window{{After: 20 * time.Second, For: 4 * time.Second, Every: 45 * time.Second}}}
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	for i, w := range sim.Motion {
		if !w.Valid() {
			errs = append(errs, fmt.Errorf("options.sim.motion[%d]: need after >= 0, for > 0, every 0 or > for", i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	src := cfg.Name + ".motion"
	prio := cfg.PriorityOr(worldmodel.High)
	return &gpiokit.Input{
		Cfg: cfg, Role: "signal", Pull: pull, ActiveLow: opts.ActiveLow,
		Debounce: gpiokit.Debounce{Period: opts.Debounce}, Warmup: opts.Warmup,
		Backoff: opts.Retry, FaultPriority: worldmodel.Normal,
		Change: func(out sensors.Sink, active bool, at time.Time, initial bool) {
			v := 0.0
			if active {
				v = 1
			}
			out.Observe(worldmodel.Observation{Time: at, Source: src, Kind: worldmodel.Reading, Value: v})
			switch {
			case active:
				out.Raise(worldmodel.Event{Time: at, Kind: "motion_start", Source: cfg.Name, Priority: prio,
					Message: "motion detected by " + cfg.Name})
			case !initial:
				out.Raise(worldmodel.Event{Time: at, Kind: "motion_end", Source: cfg.Name, Priority: worldmodel.Low,
					Message: "no more motion at " + cfg.Name})
			}
		},
		Sim: func(p *gpiosim.Pin) func() {
			return gpiosim.Drive(p, sim.Motion, gpio.Level(!opts.ActiveLow), 0, 10*time.Millisecond)
		},
	}, nil
}
