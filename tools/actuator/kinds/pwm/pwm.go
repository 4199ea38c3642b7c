// Package pwm is the pwm actuator kind: a raw PWM output (a dimmable LED
// strip, a fan, a heater) through gobot's DirectPinDriver.PwmWrite. Its
// envelope is min_duty/max_duty (default 0–1); `initial` is a duty.
//
// A sample block:
//
//   - name: fan
//     kind: pwm
//     pins: {pin: "12"}
//     limits: {max_duty: 0.8}
//     options: {frequency: 25000, on_estop: off}   # on_estop: off | hold
package pwm

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

func init() {
	actuator.Register("pwm", actuator.Kind{
		Pins: []string{"pin"},
		Initial: func(initial string) string {
			if _, err := strconv.ParseFloat(initial, 64); err != nil {
				return fmt.Sprintf("%q: expected a number for kind pwm", initial)
			}
			return ""
		},
		StopRank: 1, // power outputs stop right after motors
		New:      func(b *actuator.Base) (actuator.Actuator, error) { return newPWM(b) },
	})
}

// pwmLimits are the `limits:` of a pwm actuator, with their defaults.
type pwmLimits struct {
	actuator.Envelope `yaml:",inline"`
	MinDuty           float64 `yaml:"min_duty"` // 0..1
	MaxDuty           float64 `yaml:"max_duty"`
}

// pwmOptions are the `options:` of a pwm actuator.
type pwmOptions struct {
	// Frequency in Hz; 0 keeps the platform default (100 Hz with gobot's
	// sysfs PWM).
	Frequency float64 `yaml:"frequency"`
	// OnEStop is what an e-stop does: off (default, duty 0) or hold.
	OnEStop string `yaml:"on_estop"`
}

// pwmAct is a raw PWM output (a dimmable LED strip, a fan, a heater) driven
// through gobot's DirectPinDriver.PwmWrite.
type pwmAct struct {
	*actuator.Base
	opts   pwmOptions
	drv    *gpio.DirectPinDriver
	lo, hi float64
	clamp  bool
	duty   float64
}

func newPWM(b *actuator.Base) (*pwmAct, error) {
	cfg := b.Config()
	a := &pwmAct{Base: b, opts: pwmOptions{OnEStop: "off"}}
	if err := cfg.DecodeOptions(&a.opts); err != nil {
		return nil, err
	}
	l := pwmLimits{MinDuty: 0, MaxDuty: 1}
	if err := b.DecodeLimits(&l); err != nil {
		return nil, err
	}
	switch {
	case l.MinDuty < 0 || l.MinDuty > 1:
		return nil, cfg.BadLimit("min_duty", "outside 0–1")
	case l.MaxDuty < 0 || l.MaxDuty > 1:
		return nil, cfg.BadLimit("max_duty", "outside 0–1")
	case l.MinDuty > l.MaxDuty:
		return nil, cfg.BadLimit("max_duty", "%s is less than min_duty (%s)", actuator.Num(l.MaxDuty), actuator.Num(l.MinDuty))
	}
	a.lo, a.hi, a.clamp = l.MinDuty, l.MaxDuty, l.Clamp()
	if a.opts.OnEStop != "off" && a.opts.OnEStop != "hold" {
		return nil, cfg.BadOption("on_estop", "want off or hold")
	}
	if a.opts.Frequency < 0 || a.opts.Frequency > 100000 {
		return nil, cfg.BadOption("frequency", "outside 0–100000 Hz")
	}
	if err := actuator.InitialInside(cfg.Initial, a.lo, a.hi, ""); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *pwmAct) PWMPins() []actuator.PWMPin {
	return []actuator.PWMPin{{Actuator: a.Name(), Pin: a.Config().Pins["pin"], Period: actuator.Period(a.opts.Frequency)}}
}

func (a *pwmAct) OpenLocked() error {
	a.drv = gpio.NewDirectPinDriver(a.Adaptor(), a.Config().Pins["pin"], gpio.WithName(a.Name()))
	return nil
}

func (a *pwmAct) InitialLocked() error {
	return a.WriteInitial(func(duty float64) error {
		_, err := a.writeLocked(duty)
		return err
	})
}

// writeLocked writes a duty (0–1) on gobot's 0–255 scale and returns the
// byte written.
func (a *pwmAct) writeLocked(duty float64) (byte, error) {
	v := byte(math.Round(duty * 255))
	if err := a.drv.PwmWrite(v); err != nil {
		return 0, a.HWErrLocked(err)
	}
	a.ClearFaultLocked()
	a.duty = duty
	a.SetStateLocked(a.IdleState())
	a.Observe("duty", duty, "")
	return v, nil
}

func (a *pwmAct) SafeLocked(estop bool) (string, error) {
	a.CancelTaskLocked()
	if estop && a.opts.OnEStop == "hold" {
		return "held at duty " + actuator.Num(a.duty) + " (on_estop: hold)", nil
	}
	if _, err := a.writeLocked(0); err != nil {
		return "", err
	}
	return "off", nil
}

func (a *pwmAct) IdleState() string {
	if a.duty == 0 {
		return "off"
	}
	return "duty " + actuator.Num(a.duty)
}

type dutyParams struct {
	Duty float64 `json:"duty"`
}

func (a *pwmAct) Tools() []tools.Tool {
	viol := "refused"
	if a.clamp {
		viol = "clamped"
	}
	return []tools.Tool{
		tools.Typed(a.Spec("set",
			fmt.Sprintf("Set the %s PWM output's duty cycle, 0 to 1 (envelope %s–%s; values outside are %s). Use %s.off to switch it off.", a.Name(), actuator.Num(a.lo), actuator.Num(a.hi), viol, a.Name()),
			fmt.Sprintf(`{"type":"object","properties":{
  "duty":{"type":"number",%s,"description":"fraction of each period the output is high; envelope %s–%s"}},
"required":["duty"],"additionalProperties":false}`, actuator.RangeSchema(a.lo, a.hi, 0, 1, a.clamp), actuator.Num(a.lo), actuator.Num(a.hi)), ""),
			func(ctx context.Context, p dutyParams) (tools.Result, error) {
				c := actuator.Command{Tool: a.Name() + ".set", Params: actuator.Marshal(p)}
				return a.Do(ctx, c, func() (actuator.Outcome, error) {
					d, note, err := actuator.Bound("duty", p.Duty, a.lo, a.hi, "", a.clamp)
					if err != nil {
						return actuator.Outcome{}, err
					}
					var out actuator.Outcome
					if note != "" {
						out.Notes = append(out.Notes, note)
					}
					v, err := a.writeLocked(d)
					if err != nil {
						return actuator.Outcome{}, err
					}
					out.Applied = map[string]any{"duty": d, "level": v}
					return out, nil
				})
			}),
		tools.Func(a.Spec("off", fmt.Sprintf("Switch the %s PWM output off (duty 0).", a.Name()), "", ""),
			func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
				c := actuator.Command{Tool: a.Name() + ".off", Params: json.RawMessage("{}"), Safe: true}
				return a.Do(ctx, c, func() (actuator.Outcome, error) {
					if _, err := a.writeLocked(0); err != nil {
						return actuator.Outcome{}, err
					}
					return actuator.Outcome{Applied: map[string]any{"duty": 0}}, nil
				})
			}),
	}
}
