package actuator

import (
	"context"
	"fmt"
	"time"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
)

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
	base
	opts switchOptions
	drv  onOff
	on   bool
}

func newSwitch(s *Set, cfg board.Actuator) (*switchAct, error) {
	a := &switchAct{opts: switchOptions{OnEStop: "off"}}
	a.init(s, cfg)
	if err := cfg.Options.Decode(&a.opts); err != nil {
		return nil, err
	}
	if a.opts.OnEStop != "off" && a.opts.OnEStop != "hold" {
		return nil, fmt.Errorf("options.on_estop %q: want off or hold", a.opts.OnEStop)
	}
	return a, nil
}

func (a *switchAct) pwmPins() []pwmPin { return nil }

func (a *switchAct) openLocked() error {
	hw := a.s.hw
	pin := a.cfg.Pins["pin"]
	var d onOff
	switch a.cfg.Kind {
	case "led":
		d = gpio.NewLedDriver(hw, pin, gpio.WithName(a.cfg.Name))
	case "relay":
		var opts []any
		opts = append(opts, gpio.WithName(a.cfg.Name))
		if a.opts.ActiveLow {
			opts = append(opts, gpio.WithRelayInverted())
		}
		d = gpio.NewRelayDriver(hw, pin, opts...)
	case "digital":
		d = gpio.NewDirectPinDriver(hw, pin, gpio.WithName(a.cfg.Name))
	case "buzzer":
		d = gpio.NewBuzzerDriver(hw, pin, gpio.WithName(a.cfg.Name))
	}
	if a.opts.ActiveLow && a.cfg.Kind != "relay" {
		d = inverted{d}
	}
	a.drv = d
	return nil
}

func (a *switchAct) initialLocked() error {
	switch a.cfg.Initial {
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
		return a.hwErrLocked(err)
	}
	a.clearFaultLocked()
	a.on = on
	a.setStateLocked(onOffWord(on))
	a.observe("on", b2f(on), "")
	return nil
}

func (a *switchAct) safeLocked(estop bool) (string, error) {
	a.cancelTaskLocked()
	if estop && a.opts.OnEStop == "hold" {
		return "held " + onOffWord(a.on) + " (on_estop: hold)", nil
	}
	if err := a.writeLocked(false); err != nil {
		return "", err
	}
	return "off", nil
}

func (a *switchAct) idleState() string { return onOffWord(a.on) }

type setParams struct {
	On       bool    `json:"on"`
	Duration float64 `json:"duration"`
}

type beepParams struct {
	Count    int     `json:"count"`
	Duration float64 `json:"duration"`
	Gap      float64 `json:"gap"`
}

func (a *switchAct) tools() []tools.Tool {
	what := map[string]string{"led": "LED", "relay": "relay", "digital": "digital output", "buzzer": "buzzer"}[a.cfg.Kind]
	set := tools.Typed(a.spec("set",
		fmt.Sprintf("Switch the %s (%s) on or off. With a duration in seconds it switches off again by itself.", a.cfg.Name, what),
		`{"type":"object","properties":{
  "on":{"type":"boolean","description":"true: on, false: off"},
  "duration":{"type":"number","minimum":0,"maximum":86400,"default":0,"description":"seconds until it switches off again; 0 keeps it on"}},
"required":["on"],"additionalProperties":false}`, ""),
		func(ctx context.Context, p setParams) (tools.Result, error) {
			return a.set(ctx, p)
		})
	out := []tools.Tool{set}
	if a.cfg.Kind == "buzzer" {
		out = append(out, tools.Typed(a.spec("beep",
			fmt.Sprintf("Beep the %s buzzer: count beeps of duration seconds with gap seconds between them. Returns at once; the pattern plays in the background.", a.cfg.Name),
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
	c := command{tool: a.cfg.Name + ".set", params: marshal(p), safe: !p.On}
	return a.do(ctx, a, c, func() (outcome, error) {
		a.cancelTaskLocked()
		if err := a.writeLocked(p.On); err != nil {
			return outcome{}, err
		}
		applied := map[string]any{"on": p.On}
		if p.On && p.Duration > 0 {
			d := seconds(p.Duration)
			applied["off_in_s"] = p.Duration
			a.setStateLocked(fmt.Sprintf("on (off in %s)", d))
			a.startTaskLocked(d, func(stop <-chan struct{}, t clock.Timer) { a.autoOff(stop, t, d) })
		}
		return outcome{applied: applied}, nil
	})
}

// autoOff switches the output off when t fires, unless cancelled first.
func (a *switchAct) autoOff(stop <-chan struct{}, t clock.Timer, d time.Duration) {
	if !a.nextLocked(stop, t) {
		return
	}
	a.endTaskLocked()
	err := a.writeLocked(false)
	a.mu.Unlock()
	a.s.audit.record(Entry{Time: a.s.clk.Now(), Caller: "timer", Tool: a.cfg.Name + ".set", Actuator: a.cfg.Name,
		Applied: marshal(map[string]any{"on": false}), Result: resultOf(err), Error: errString(err),
		Notes: []string{fmt.Sprintf("duration of %s elapsed", d)}})
}

func (a *switchAct) beep(ctx context.Context, p beepParams) (tools.Result, error) {
	c := command{tool: a.cfg.Name + ".beep", params: marshal(p)}
	return a.do(ctx, a, c, func() (outcome, error) {
		a.cancelTaskLocked()
		if err := a.writeLocked(true); err != nil {
			return outcome{}, err
		}
		on, gap := seconds(p.Duration), seconds(p.Gap)
		a.setStateLocked(fmt.Sprintf("beeping %d×", p.Count))
		a.startTaskLocked(on, func(stop <-chan struct{}, t clock.Timer) { a.pattern(stop, t, p.Count, on, gap) })
		total := time.Duration(p.Count)*on + time.Duration(p.Count-1)*gap
		return outcome{applied: map[string]any{"count": p.Count, "duration": p.Duration, "gap": p.Gap, "total_s": total.Seconds()}}, nil
	})
}

// pattern plays the rest of a beep pattern whose first beep has started.
func (a *switchAct) pattern(stop <-chan struct{}, t clock.Timer, count int, on, gap time.Duration) {
	high := true
	for left := count; ; {
		if !a.nextLocked(stop, t) {
			return
		}
		if high {
			left--
		}
		high = !high && left > 0
		err := a.writeLocked(high)
		if err != nil || left == 0 {
			a.endTaskLocked()
			a.mu.Unlock()
			return
		}
		a.setStateLocked(fmt.Sprintf("beeping %d×", left))
		if high {
			t.Reset(on)
		} else {
			t.Reset(gap)
		}
		a.mu.Unlock()
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
