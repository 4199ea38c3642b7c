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
	"math"
	"slices"
	"time"

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
			errs = append(errs, fmt.Errorf("pins.%s: unknown role (hcsr04 has trigger and echo)", k))
		}
	}
	if opts.Samples < 1 || opts.Samples > 15 {
		errs = append(errs, fmt.Errorf("options.samples: %d must be 1..15", opts.Samples))
	}
	if opts.MaxDistance < 0.05 || opts.MaxDistance > 6 {
		errs = append(errs, fmt.Errorf("options.max_distance: %g m must be 0.05..6", opts.MaxDistance))
	}
	if opts.TemperatureC < -40 || opts.TemperatureC > 85 {
		errs = append(errs, fmt.Errorf("options.temperature_c: %g must be -40..85", opts.TemperatureC))
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
	h := sensors.NewHealth(s.cfg.Name, out, worldmodel.Normal)
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
		t := time.NewTicker(s.interval())
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
				out.Observe(worldmodel.Observation{Time: time.Now(), Source: s.source, Kind: worldmodel.Reading, Value: d, Unit: "m"})
			}
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
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

// SpeedOfSound in dry air at t °C, in m/s: 331.3·√(1 + t/273.15), which
// is 343.2 m/s at 20 °C.
func SpeedOfSound(t float64) float64 { return 331.3 * math.Sqrt(1+t/273.15) }

// Ranger measures distances with one HC-SR04.
type Ranger struct {
	Trigger      gpio.PinOut
	Echo         gpio.PinIn
	MaxDistance  float64 // m
	TemperatureC float64
	// Edges says Echo was configured with edge detection (gpio.BothEdges).
	// The kernel queues edge events whatever the scheduler does, which
	// makes "the module did not answer" certain even when polling was
	// preempted; timing still comes from polling.
	Edges bool

	// hint is the last precise flight time. The next echo is likely to be
	// about as long, so the poller sleeps through most of it instead of
	// spinning (see ping).
	hint time.Duration
}

// Measure returns the median distance of n pings, 60 ms apart, that saw
// an obstacle; ok is false when none did (nothing within MaxDistance). A
// module that never answers is an error.
//
// The echo is timed by polling the line, so a ping is only as good as the
// gaps between polls: if the thread was preempted while the echo began or
// ended (a loaded two-core board does that for milliseconds at a time),
// the ping's timing is unknown to within that gap. Such pings are thrown
// away and retried, up to 3n pings in all, rather than outvoted: a reading
// that is wrong by a metre is worse than one that comes late.
func (r *Ranger) Measure(ctx context.Context, n int) (dist float64, ok bool, err error) {
	c := SpeedOfSound(r.TemperatureC)
	maxFlight := time.Duration(2 * r.MaxDistance / c * float64(time.Second))
	var flights []time.Duration
	far, noEcho, tries := 0, 0, 0
	for ; len(flights)+far < n && tries < 3*n; tries++ {
		if tries > 0 {
			if err := sensors.Sleep(ctx, pingGap); err != nil {
				return 0, false, err
			}
		}
		p, err := r.ping(maxFlight, r.hint)
		if err != nil {
			return 0, false, err
		}
		switch {
		case p.uncertainty > Precision:
			// Preempted at an edge, or the echo ended while sleeping on a
			// stale hint: timing unknown, try again without a hint.
			r.hint = 0
		case p.noEcho:
			noEcho++
		case !p.inRange:
			far++
			r.hint = 0
		default:
			flights = append(flights, p.flight)
			r.hint = p.flight
		}
	}
	if len(flights) == 0 && far == 0 {
		if noEcho > 0 {
			return 0, false, ErrNoEcho
		}
		return 0, false, nil // no ping was precise enough
	}
	if len(flights) == 0 {
		return 0, false, nil
	}
	slices.Sort(flights)
	return flights[len(flights)/2].Seconds() * c / 2, true, nil
}

// Precision is the largest timing uncertainty of a ping that is kept:
// 40 µs of round trip is 7 mm.
const Precision = 40 * time.Microsecond

type pingResult struct {
	flight      time.Duration
	uncertainty time.Duration // how late the two edges may have been seen
	inRange     bool
	noEcho      bool
}

// ping sends one trigger pulse and times the echo. With a hint (the last
// flight time) it sleeps through the first three quarters of the expected
// echo, less 1 ms for timer slack, before polling for its end: spinning
// through a 2 m echo costs 11.7 ms of CPU, this about 4 ms. The quarter
// left is the margin for an obstacle coming closer between pings (25 cm
// at 1 m, enough for a robot at 1 m/s pinging every 250 ms); if it came
// closer still, the echo ended during the sleep, the first poll already
// reads low, the edge cannot be dated, and the ping is rejected as
// imprecise and retried without the hint.
func (r *Ranger) ping(maxFlight, hint time.Duration) (pingResult, error) {
	if r.Echo.Read() {
		// A previous echo is still running (the 38 ms no-object pulse).
		if _, ok, _ := waitLevel(r.Echo, gpio.Low, 40*time.Millisecond, time.Time{}); !ok {
			return pingResult{}, errors.New("echo line stuck high")
		}
	}
	if r.Edges {
		// Drop the previous ping's edge events.
		for i := 0; i < 8 && r.Echo.WaitForEdge(time.Microsecond); i++ {
		}
	}
	if err := r.Trigger.Out(gpio.High); err != nil {
		return pingResult{}, err
	}
	// At least 10 µs: busy-wait, as a sleep this short would take ~50 µs
	// or more and gains nothing.
	for t := time.Now(); time.Since(t) < 10*time.Microsecond; {
	}
	if err := r.Trigger.Out(gpio.Low); err != nil {
		return pingResult{}, err
	}
	// The module sends its 8-cycle 40 kHz burst, then raises ECHO
	// (typically ~0.5 ms after the trigger).
	rise, ok, gap := waitLevel(r.Echo, gpio.High, 10*time.Millisecond, time.Time{})
	if !ok {
		res := pingResult{noEcho: true}
		switch {
		case r.Edges:
			// An edge event means it did answer and the pulse fell between
			// two polls: untimed, not absent.
			if r.Echo.WaitForEdge(30 * time.Millisecond) {
				res.uncertainty = time.Duration(math.MaxInt64)
			}
		case gap > time.Millisecond:
			// Polling alone: "no echo" is only known if the polls were close
			// enough together that no pulse fitted between two of them. A
			// connected module always answers (38 ms when nothing is in
			// range) and only an obstacle nearer than 17 cm gives a pulse
			// under 1 ms; a fault needs every ping of a reading to see
			// nothing, so a 1 ms bound is safe.
			res.uncertainty = time.Duration(math.MaxInt64)
		}
		return res, nil
	}
	last := rise.seenStart
	if nap := hint*3/4 - time.Millisecond; nap > 0 {
		time.Sleep(nap)
		before := time.Now()
		if !r.Echo.Read() {
			return pingResult{uncertainty: time.Duration(math.MaxInt64)}, nil
		}
		last = before
	}
	fall, ok, _ := waitLevel(r.Echo, gpio.Low, maxFlight-time.Since(rise.seen), last)
	// Saturating: an undatable edge's gap is MaxInt64 and must not wrap
	// around to a small (precise-looking) sum.
	res := pingResult{uncertainty: max(rise.gap(), fall.gap())}
	if g := rise.gap() + fall.gap(); g > res.uncertainty {
		res.uncertainty = g
	}
	if !ok {
		return res, nil // nothing in range; the pulse ends by itself at ~38 ms
	}
	res.flight, res.inRange = fall.seen.Sub(rise.seen), true
	return res, nil
}

// edge brackets a level change: it happened after the start of the last
// poll that saw the old level and before the end of the first poll that
// saw the new one. A poll is bracketed on both sides because the thread
// can be preempted inside the read itself, which would otherwise date an
// old sample as new.
type edge struct {
	last      time.Time // start of the last poll that saw the old level; zero if none did
	seenStart time.Time // start of the first poll that saw the new level
	seen      time.Time // its end
}

// gap is how uncertain the edge's time is; unbounded when no poll saw the
// old level (the change happened before polling started).
func (e edge) gap() time.Duration {
	if e.last.IsZero() {
		return time.Duration(math.MaxInt64)
	}
	return e.seen.Sub(e.last)
}

// waitLevel polls p until it reads l or timeout passes. last is the start
// of a poll known to have seen the old level (zero if unknown). On timeout
// the edge brackets the last poll, and maxGap is the longest stretch
// between two polls' samples: a pulse shorter than that could have come
// and gone unseen.
func waitLevel(p gpio.PinIn, l gpio.Level, timeout time.Duration, last time.Time) (e edge, ok bool, maxGap time.Duration) {
	start := time.Now()
	for {
		before := time.Now()
		v := p.Read()
		after := time.Now()
		if !last.IsZero() {
			maxGap = max(maxGap, after.Sub(last))
		}
		if v == l || after.Sub(start) > timeout {
			return edge{last, before, after}, v == l, maxGap
		}
		last = before
	}
}
