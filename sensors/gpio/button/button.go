// Package button is the "button" and "estop" sensor kinds: push buttons on
// GPIO inputs, debounced in software.
//
// A button raises its event (button_press, Normal, unless options.event
// says otherwise) when pressed, and optionally another on release. The
// reading <name>.pressed is 1 while it is held.
//
// An estop is an emergency-stop button: pressing it raises the Critical
// event "estop", which stops every actuator without waiting for the agent
// loop (the safety envelope latches it until reset); releasing it raises
// estop_released (Normal), which does not reset anything. It is wired
// normally-closed by default — the contact holds the input low against
// the pull-up, so pressing the button, a cut wire or a pulled connector
// all read as "stop". It reacts on the first edge instead of waiting for
// the contact to settle, and if its input cannot be opened at all it
// raises estop too (fail-safe): a robot whose e-stop is not wired must
// not move. The reading <name>.engaged is 1 while the stop is engaged.
//
// Sample blocks (Raspberry Pi):
//
//	sensors:
//	  - name: user_button
//	    kind: button
//	    pins: {signal: "13"}     # GPIO27, button to GND
//	    options:
//	      pull: up
//	      active_low: true       # pressed = low
//	      debounce: 20ms
//	      event: button_press
//	      release_event: button_release   # empty: no event on release
//	  - name: estop
//	    kind: estop
//	    pins: {signal: "15"}     # GPIO22, NC contact to GND
//	    options:
//	      normally_closed: true  # false for a normally-open button to GND
//	      debounce: 5ms
//	      sim: {presses: [{after: 2m, for: 3s, every: 10m}]}
package button

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiokit"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/gpio"
)

func init() {
	sensors.Register("button", NewButton)
	sensors.Register("estop", NewEStop)
}

// Opts is the options block of a button.
type Opts struct {
	Pull         string          `yaml:"pull"`
	ActiveLow    bool            `yaml:"active_low"`
	Debounce     time.Duration   `yaml:"debounce"`
	Event        string          `yaml:"event"`
	ReleaseEvent string          `yaml:"release_event"`
	Retry        sensors.Backoff `yaml:"retry"`
	Sim          *Sim            `yaml:"sim"`
}

// EStopOpts is the options block of an estop.
type EStopOpts struct {
	NormallyClosed bool            `yaml:"normally_closed"`
	Debounce       time.Duration   `yaml:"debounce"`
	FailSafe       bool            `yaml:"fail_safe"`
	Retry          sensors.Backoff `yaml:"retry"`
	Sim            *Sim            `yaml:"sim"`
}

// Sim scripts presses on platform sim. Each press bounces like a real
// contact (Bounce transitions, 1 ms apart).
type Sim struct {
	Presses []gpiosim.Window `yaml:"presses"`
	Bounce  int              `yaml:"bounce"`
}

var eventRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func checkPins(cfg sensors.Config) []error {
	var errs []error
	if cfg.Pins["signal"] == "" {
		errs = append(errs, errors.New("pins.signal: required"))
	}
	for k := range cfg.Pins {
		if k != "signal" {
			errs = append(errs, errors.New("pins: a role button does not have (it has only signal)"))
		}
	}
	return errs
}

func checkSim(s *Sim) []error {
	var errs []error
	if s == nil {
		return nil
	}
	for i, w := range s.Presses {
		if !w.Valid() {
			errs = append(errs, fmt.Errorf("options.sim.presses[%d]: need after >= 0, for > 0, every 0 or > for", i))
		}
	}
	if s.Bounce < 0 || s.Bounce > 50 {
		errs = append(errs, errors.New("options.sim.bounce: must be 0..50"))
	}
	return errs
}

func level(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// NewButton builds a button sensor.
func NewButton(cfg sensors.Config) (sensors.Sensor, error) {
	opts := Opts{Pull: "up", ActiveLow: true, Debounce: 20 * time.Millisecond, Event: "button_press"}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	errs := checkPins(cfg)
	pull, err := gpiokit.ParsePull(opts.Pull)
	if err != nil {
		errs = append(errs, fmt.Errorf("options.%w", err))
	}
	if !eventRe.MatchString(opts.Event) {
		errs = append(errs, errors.New("options.event: must match [a-z][a-z0-9_]*"))
	}
	if opts.ReleaseEvent != "" && !eventRe.MatchString(opts.ReleaseEvent) {
		errs = append(errs, errors.New("options.release_event: must match [a-z][a-z0-9_]*"))
	}
	if opts.Debounce < 0 {
		errs = append(errs, errors.New("options.debounce: must be >= 0"))
	}
	errs = append(errs, checkSim(opts.Sim)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	src := cfg.Name + ".pressed"
	prio := cfg.PriorityOr(worldmodel.Normal)
	in := &gpiokit.Input{
		Cfg: cfg, Role: "signal", Pull: pull, ActiveLow: opts.ActiveLow,
		Debounce: gpiokit.Debounce{Period: opts.Debounce}, Backoff: opts.Retry, FaultPriority: worldmodel.Normal,
		Change: func(out sensors.Sink, pressed bool, at time.Time, initial bool) {
			out.Observe(worldmodel.Observation{Time: at, Source: src, Kind: worldmodel.Reading, Value: level(pressed)})
			switch {
			case initial: // a button held at start is not a press
			case pressed:
				out.Raise(worldmodel.Event{Time: at, Kind: opts.Event, Source: cfg.Name, Priority: prio, Message: cfg.Name + " pressed"})
			case opts.ReleaseEvent != "":
				out.Raise(worldmodel.Event{Time: at, Kind: opts.ReleaseEvent, Source: cfg.Name, Priority: prio, Message: cfg.Name + " released"})
			}
		},
	}
	if opts.Sim != nil {
		sim, active := *opts.Sim, gpio.Level(!opts.ActiveLow)
		in.Sim = func(p *gpiosim.Pin) func() {
			return gpiosim.Drive(p, sim.Presses, active, sim.Bounce, time.Millisecond)
		}
	}
	return in, nil
}

// NewEStop builds an estop sensor.
func NewEStop(cfg sensors.Config) (sensors.Sensor, error) {
	opts := EStopOpts{NormallyClosed: true, Debounce: 5 * time.Millisecond, FailSafe: true}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	errs := checkPins(cfg)
	if opts.Debounce < 0 {
		errs = append(errs, errors.New("options.debounce: must be >= 0"))
	}
	errs = append(errs, checkSim(opts.Sim)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Both wirings use the pull-up and a contact to GND. Normally closed:
	// the line is low until the contact opens (pressed, or a broken wire)
	// and the pull-up takes it high. Normally open: pressing pulls it low.
	activeLow := !opts.NormallyClosed
	src := cfg.Name + ".engaged"
	estop := func(out sensors.Sink, at time.Time, why string, data map[string]any) {
		out.Raise(worldmodel.Event{Time: at, Kind: "estop", Source: cfg.Name, Priority: worldmodel.Critical, Message: why, Data: data})
	}
	in := &gpiokit.Input{
		Cfg: cfg, Role: "signal", Pull: gpio.PullUp, ActiveLow: activeLow,
		Debounce: gpiokit.Debounce{Period: opts.Debounce, Leading: true}, Backoff: opts.Retry,
		FaultPriority: worldmodel.High,
		Change: func(out sensors.Sink, engaged bool, at time.Time, initial bool) {
			out.Observe(worldmodel.Observation{Time: at, Source: src, Kind: worldmodel.Reading, Value: level(engaged)})
			switch {
			case engaged && initial:
				estop(out, at, "emergency stop engaged at start ("+cfg.Name+")", nil)
			case engaged:
				estop(out, at, "emergency stop pressed ("+cfg.Name+")", nil)
			case !initial:
				out.Raise(worldmodel.Event{Time: at, Kind: "estop_released", Source: cfg.Name, Priority: worldmodel.Normal,
					Message: "emergency stop button released (" + cfg.Name + "); the stop stays latched until reset"})
			}
		},
	}
	if opts.FailSafe {
		in.Fault = func(out sensors.Sink, err error) {
			estop(out, clock.Or(cfg.Clock).Now(), "emergency stop input unavailable ("+cfg.Name+"): "+err.Error(), map[string]any{"fail_safe": true})
		}
	}
	if opts.Sim != nil {
		sim, active := *opts.Sim, gpio.Level(!activeLow)
		in.Sim = func(p *gpiosim.Pin) func() {
			return gpiosim.Drive(p, sim.Presses, active, sim.Bounce, time.Millisecond)
		}
	} else {
		// An idle e-stop on the sim board: the contact holds the line at
		// its released level.
		in.Sim = func(p *gpiosim.Pin) func() {
			return gpiosim.Drive(p, nil, gpio.Level(!activeLow), 0, time.Second)
		}
	}
	return in, nil
}
