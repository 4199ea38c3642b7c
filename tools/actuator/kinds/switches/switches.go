// Package switches is the on/off actuator kinds, each a gobot GPIO driver
// on one pin: led (LedDriver), relay (RelayDriver, active-low boards
// through its own inversion), digital (DirectPinDriver) and buzzer
// (BuzzerDriver, with a beep skill). Each is a Home Assistant switch.
//
// A sample block:
//
//   - name: pump
//     kind: relay
//     pins: {pin: "16"}
//     initial: "off"
//     options: {active_low: true, on_estop: off}   # on_estop: off | hold
package switches

import (
	"context"
	"fmt"
	"time"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

func init() {
	for _, kind := range []string{"led", "relay", "digital", "buzzer"} {
		actuator.Register(kind, actuator.Kind{
			Pins: []string{"pin"}, Initial: initialOnOff, StopRank: stopRank[kind],
			New: func(b *actuator.Base) (actuator.Actuator, error) { return newSwitch(b) },
		})
	}
}

// stopRank: an e-stop cuts power outputs (relay, buzzer, digital) before
// lights.
var stopRank = map[string]int{"relay": 2, "buzzer": 2, "digital": 2, "led": 3}

func initialOnOff(initial string) string {
	if initial != "on" && initial != "off" {
		return "not one of on, off"
	}
	return ""
}

// switchOptions are the `options:` of led, relay, digital and buzzer.
type switchOptions struct {
	// ActiveLow: the output is on when the pin is low (most relay boards).
	ActiveLow bool `yaml:"active_low"`
	// OnEStop is what an e-stop does to the output: off (default) or hold.
	OnEStop string `yaml:"on_estop"`
}

// onOff is what gobot's LedDriver, RelayDriver, DirectPinDriver and
// BuzzerDriver have in common.
type onOff interface {
	On() error
	Off() error
}

// inverted swaps On and Off for active-low wiring of drivers that have no
// such option of their own.
type inverted struct{ onOff }

func (i inverted) On() error  { return i.onOff.Off() }
func (i inverted) Off() error { return i.onOff.On() }

// switchAct is a digital output: led, relay, digital or buzzer.
type switchAct struct {
	*actuator.Base
	opts switchOptions
	drv  onOff
	on   bool
}

func newSwitch(b *actuator.Base) (*switchAct, error) {
	a := &switchAct{Base: b, opts: switchOptions{OnEStop: "off"}}
	if err := b.Config().DecodeOptions(&a.opts); err != nil {
		return nil, err
	}
	if a.opts.OnEStop != "off" && a.opts.OnEStop != "hold" {
		return nil, b.Config().BadOption("on_estop", "want off or hold")
	}
	return a, nil
}

func (a *switchAct) PWMPins() []actuator.PWMPin { return nil }

func (a *switchAct) OpenLocked() error {
	hw := a.Adaptor()
	pin := a.Config().Pins["pin"]
	var d onOff
	switch a.Config().Kind {
	case "led":
		d = gpio.NewLedDriver(hw, pin, gpio.WithName(a.Name()))
	case "relay":
		var opts []any
		opts = append(opts, gpio.WithName(a.Name()))
		if a.opts.ActiveLow {
			opts = append(opts, gpio.WithRelayInverted())
		}
		d = gpio.NewRelayDriver(hw, pin, opts...)
	case "digital":
		d = gpio.NewDirectPinDriver(hw, pin, gpio.WithName(a.Name()))
	case "buzzer":
		d = gpio.NewBuzzerDriver(hw, pin, gpio.WithName(a.Name()))
	}
	if a.opts.ActiveLow && a.Config().Kind != "relay" {
		d = inverted{d}
	}
	a.drv = d
	return nil
}

func (a *switchAct) InitialLocked() error {
	switch a.Config().Initial {
	case "on":
		return a.writeLocked(true)
	case "off":
		return a.writeLocked(false)
	}
	return nil
}

func (a *switchAct) writeLocked(on bool) error {
	var err error
	if on {
		err = a.drv.On()
	} else {
		err = a.drv.Off()
	}
	if err != nil {
		return a.HWErrLocked(err)
	}
	a.ClearFaultLocked()
	a.on = on
	a.SetStateLocked(onOffWord(on))
	a.Observe("on", b2f(on), "")
	return nil
}

func (a *switchAct) SafeLocked(estop bool) (string, error) {
	a.CancelTaskLocked()
	if estop && a.opts.OnEStop == "hold" {
		return "held " + onOffWord(a.on) + " (on_estop: hold)", nil
	}
	if err := a.writeLocked(false); err != nil {
		return "", err
	}
	return "off", nil
}

func (a *switchAct) IdleState() string { return onOffWord(a.on) }

type setParams struct {
	On       bool    `json:"on"`
	Duration float64 `json:"duration"`
}

type beepParams struct {
	Count    int     `json:"count"`
	Duration float64 `json:"duration"`
	Gap      float64 `json:"gap"`
}

func (a *switchAct) Tools() []tools.Tool {
	what := map[string]string{"led": "LED", "relay": "relay", "digital": "digital output", "buzzer": "buzzer"}[a.Config().Kind]
	spec := a.Spec("set",
		fmt.Sprintf("Switch the %s (%s) on or off. With a duration in seconds it switches off again by itself.", a.Name(), what),
		`{"type":"object","properties":{
  "on":{"type":"boolean","description":"true: on, false: off"},
  "duration":{"type":"number","minimum":0,"maximum":86400,"default":0,"description":"seconds until it switches off again; 0 keeps it on"}},
"required":["on"],"additionalProperties":false}`, "")
	if a.Config().Kind != "buzzer" { // a buzzer beeps; it is not a switch to leave on
		spec.Entity = &tools.Entity{Platform: "switch", Name: a.Name(), Param: "on"}
	}
	set := tools.Typed(spec, func(ctx context.Context, p setParams) (tools.Result, error) {
		return a.set(ctx, p)
	})
	out := []tools.Tool{set}
	if a.Config().Kind == "buzzer" {
		out = append(out, tools.Typed(a.Spec("beep",
			fmt.Sprintf("Beep the %s buzzer: count beeps of duration seconds with gap seconds between them. Returns at once; the pattern plays in the background.", a.Name()),
			`{"type":"object","properties":{
  "count":{"type":"integer","minimum":1,"maximum":20,"default":1},
  "duration":{"type":"number","minimum":0.01,"maximum":5,"default":0.2,"description":"seconds each beep lasts"},
  "gap":{"type":"number","minimum":0.01,"maximum":5,"default":0.2,"description":"seconds between beeps"}},
"additionalProperties":false}`, ""),
			func(ctx context.Context, p beepParams) (tools.Result, error) {
				return a.beep(ctx, p)
			}))
	}
	return out
}

func (a *switchAct) set(ctx context.Context, p setParams) (tools.Result, error) {
	c := actuator.Command{Tool: a.Name() + ".set", Params: actuator.Marshal(p), Safe: !p.On}
	return a.Do(ctx, c, func() (actuator.Outcome, error) {
		a.CancelTaskLocked()
		if err := a.writeLocked(p.On); err != nil {
			return actuator.Outcome{}, err
		}
		applied := map[string]any{"on": p.On}
		if p.On && p.Duration > 0 {
			d := actuator.Seconds(p.Duration)
			applied["off_in_s"] = p.Duration
			a.SetStateLocked(fmt.Sprintf("on (off in %s)", d))
			a.StartTaskLocked(d, func(stop <-chan struct{}, t clock.Timer) { a.autoOff(stop, t, d) })
		}
		return actuator.Outcome{Applied: applied}, nil
	})
}

// autoOff switches the output off when t fires, unless cancelled first.
func (a *switchAct) autoOff(stop <-chan struct{}, t clock.Timer, d time.Duration) {
	if !a.NextLocked(stop, t) {
		return
	}
	a.EndTaskLocked()
	err := a.writeLocked(false)
	a.Unlock()
	a.AuditBackground("timer", a.Name()+".set", map[string]any{"on": false}, err, fmt.Sprintf("duration of %s elapsed", d))
}

func (a *switchAct) beep(ctx context.Context, p beepParams) (tools.Result, error) {
	c := actuator.Command{Tool: a.Name() + ".beep", Params: actuator.Marshal(p)}
	return a.Do(ctx, c, func() (actuator.Outcome, error) {
		a.CancelTaskLocked()
		if err := a.writeLocked(true); err != nil {
			return actuator.Outcome{}, err
		}
		on, gap := actuator.Seconds(p.Duration), actuator.Seconds(p.Gap)
		a.SetStateLocked(fmt.Sprintf("beeping %d×", p.Count))
		a.StartTaskLocked(on, func(stop <-chan struct{}, t clock.Timer) { a.pattern(stop, t, p.Count, on, gap) })
		total := time.Duration(p.Count)*on + time.Duration(p.Count-1)*gap
		return actuator.Outcome{Applied: map[string]any{"count": p.Count, "duration": p.Duration, "gap": p.Gap, "total_s": total.Seconds()}}, nil
	})
}

// pattern plays the rest of a beep pattern whose first beep has started.
func (a *switchAct) pattern(stop <-chan struct{}, t clock.Timer, count int, on, gap time.Duration) {
	high := true
	for left := count; ; {
		if !a.NextLocked(stop, t) {
			return
		}
		if high {
			left--
		}
		high = !high && left > 0
		err := a.writeLocked(high)
		if err != nil || left == 0 {
			a.EndTaskLocked()
			a.Unlock()
			return
		}
		a.SetStateLocked(fmt.Sprintf("beeping %d×", left))
		if high {
			t.Reset(on)
		} else {
			t.Reset(gap)
		}
		a.Unlock()
	}
}

func onOffWord(on bool) string {
	if on {
		return "on"
	}
	return "off"
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
