// Package hcsr04 is the "hcsr04" sensor kind: an HC-SR04 ultrasonic
// rangefinder on two GPIO lines. Reading: <name>.distance (m), the median
// of a few pings; thresholds on it make obstacle alarms.
//
// Sample block (Raspberry Pi):
//
//	sensors:
//	  - name: front_range
//	    kind: hcsr04
//	    pins: {trigger: "16", echo: "18"}   # GPIO23, GPIO24
//	    interval: 250ms
//	    thresholds:
//	      - {quantity: distance, below: 0.30, hysteresis: 0.10, priority: high, event: obstacle}
//	    options:
//	      samples: 3            # pings per reading (median)
//	      max_distance: 4.0     # m; longer echoes count as "nothing in range"
//	      temperature_c: 20     # air temperature for the speed of sound (0.17 %/°C)
//	      sim:
//	        distance: {base: 1.5, amplitude: 1.2, period: 20s}   # something approaching and leaving
//
// Wiring: the module runs on 5 V and its ECHO output is 5 V; a Raspberry Pi
// or Jetson input takes 3.3 V at most, so put a divider on ECHO (1 kΩ
// series, 2 kΩ to GND). TRIG accepts 3.3 V.
//
// Timing: a ping is a ≥10 µs trigger pulse; the module answers with an
// echo pulse as long as the sound's round trip (5.8 ms per metre). The
// kind times the echo by polling the line, accurate to a few microseconds
// (about a millimetre), and throws away pings during which the thread was
// preempted at an edge. It polls only around the edges: once it knows the
// distance it sleeps through most of the next echo, so a 2 m reading costs
// about 4 ms of CPU per ping rather than 12.
// Pings are at least 60 ms apart, as the datasheet asks, so that an echo
// of the previous ping is not taken for the next.
package hcsr04

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiokit"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"github.com/edgeagent/edgeagent/sensors/simcurve"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/gpio"
)

func init() { sensors.Register("hcsr04", New) }

// Opts is the options block.
type Opts struct {
	Samples      int             `yaml:"samples"`
	MaxDistance  float64         `yaml:"max_distance"`
	TemperatureC float64         `yaml:"temperature_c"`
	Retry        sensors.Backoff `yaml:"retry"`
	Sim          *Sim            `yaml:"sim"`
}

// Sim is the simulated scene in front of the module.
type Sim struct {
	Distance     simcurve.Curve `yaml:"distance"` // m
	TemperatureC *float64       `yaml:"temperature_c"`
	// Unplugged schedules times when the module is disconnected (no echo).
	Unplugged []gpiosim.Window `yaml:"unplugged"`
}

// pingGap is the datasheet's minimum measurement cycle.
const pingGap = 60 * time.Millisecond

// ErrNoEcho means the echo line never rose after a trigger: the module is
// unpowered, unplugged or miswired.
var ErrNoEcho = errors.New("no echo pulse after trigger (module unpowered, unplugged or miswired?)")

// New builds an hcsr04 sensor.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	opts := Opts{Samples: 3, MaxDistance: 4, TemperatureC: 20}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var errs []error
	for _, r := range []string{"trigger", "echo"} {
		if cfg.Pins[r] == "" {
			errs = append(errs, fmt.Errorf("pins.%s: required", r))
		}
	}
	for k := range cfg.Pins {
		if k != "trigger" && k != "echo" {
			errs = append(errs, errors.New("pins: a role hcsr04 does not have (it has trigger and echo)"))
		}
	}
	if opts.Samples < 1 || opts.Samples > 15 {
		errs = append(errs, errors.New("options.samples: must be 1..15"))
	}
	if opts.MaxDistance < 0.05 || opts.MaxDistance > 6 {
		errs = append(errs, errors.New("options.max_distance: must be 0.05..6 m"))
	}
	if opts.TemperatureC < -40 || opts.TemperatureC > 85 {
		errs = append(errs, errors.New("options.temperature_c: must be -40..85"))
	}
	sim := Sim{Distance: simcurve.Curve{Base: 1.5, Amplitude: 1.2, Period: 20 * time.Second}}
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	if err := sim.Distance.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("options.sim.distance: %w", err))
	}
	for i, w := range sim.Unplugged {
		if !w.Valid() {
			errs = append(errs, fmt.Errorf("options.sim.unplugged[%d]: need after >= 0, for > 0, every 0 or > for", i))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &sensor{cfg: cfg, opts: opts, sim: sim, source: cfg.Name + ".distance"}, nil
}

type sensor struct {
	cfg    sensors.Config
	opts   Opts
	sim    Sim
	source string
}

func (s *sensor) Name() string { return s.cfg.Name }

func (s *sensor) interval() time.Duration {
	min := time.Duration(s.opts.Samples) * pingGap
	if s.cfg.Interval <= 0 {
		return max(250*time.Millisecond, min)
	}
	return max(s.cfg.Interval, min)
}

// Run implements sensors.Sensor.
func (s *sensor) Run(ctx context.Context, out sensors.Sink) error {
	if s.cfg.Platform == "sim" {
		defer s.startSim()()
	}
	clk := clock.Or(s.cfg.Clock)
	h := sensors.NewHealth(clk, s.cfg.Name, out, worldmodel.Normal)
	return sensors.Supervise(ctx, h, s.opts.Retry, func(ctx context.Context) error {
		trig, err := gpiokit.OpenPin(s.cfg, "trigger")
		if err != nil {
			return err
		}
		echo, err := gpiokit.OpenPin(s.cfg, "echo")
		if err != nil {
			return err
		}
		if err := trig.Out(gpio.Low); err != nil {
			return fmt.Errorf("trigger pin %s: %w", s.cfg.Pins["trigger"], err)
		}
		edges := true
		if err := echo.In(gpio.PullDown, gpio.BothEdges); err != nil {
			// No edge detection on this line (sysfs without edge support):
			// polling alone.
			edges = false
			if err := echo.In(gpio.PullDown, gpio.NoEdge); err != nil {
				return fmt.Errorf("echo pin %s: %w", s.cfg.Pins["echo"], err)
			}
		}
		r := Ranger{Trigger: trig, Echo: echo, MaxDistance: s.opts.MaxDistance, TemperatureC: s.opts.TemperatureC, Edges: edges}
		t := clk.NewTicker(s.interval())
		defer t.Stop()
		for {
			d, ok, err := r.Measure(ctx, s.opts.Samples)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			h.OK()
			if ok {
				out.Observe(worldmodel.Observation{Time: clk.Now(), Source: s.source, Kind: worldmodel.Reading, Value: d, Unit: "m"})
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C():
			}
		}
	})
}

func (s *sensor) startSim() (detach func()) {
	temp := s.opts.TemperatureC
	if s.sim.TemperatureC != nil {
		temp = *s.sim.TemperatureC
	}
	m := &gpiosim.HCSR04{
		Trigger: gpiosim.Shared(s.cfg.Pins["trigger"]), Echo: gpiosim.Shared(s.cfg.Pins["echo"]),
		Distance: s.sim.Distance, TemperatureC: temp, Unplugged: s.sim.Unplugged,
	}
	m.Attach()
	return m.Detach
}
