package actuator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools"
)

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
	base
	opts   pwmOptions
	drv    *gpio.DirectPinDriver
	lo, hi float64
	clamp  bool
	duty   float64
}

func newPWM(s *Set, cfg board.Actuator) (*pwmAct, error) {
	a := &pwmAct{opts: pwmOptions{OnEStop: "off"}, lo: 0, hi: 1, clamp: cfg.Limits.OnViolation == "clamp"}
	a.init(s, cfg)
	b := &a.base
	if err := cfg.Options.Decode(&a.opts); err != nil {
		return nil, err
	}
	if a.opts.OnEStop != "off" && a.opts.OnEStop != "hold" {
		return nil, fmt.Errorf("options.on_estop %q: want off or hold", a.opts.OnEStop)
	}
	if a.opts.Frequency < 0 || a.opts.Frequency > 100000 {
		return nil, fmt.Errorf("options.frequency %s Hz is outside 0–100000", num(a.opts.Frequency))
	}
	if l := b.cfg.Limits; l.MinDuty != nil {
		a.lo = *l.MinDuty
	}
	if l := b.cfg.Limits; l.MaxDuty != nil {
		a.hi = *l.MaxDuty
	}
	if err := initialInside(cfg.Initial, a.lo, a.hi, ""); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *pwmAct) pwmPins() []pwmPin {
	return []pwmPin{{actuator: a.cfg.Name, pin: a.cfg.Pins["pin"], period: period(a.opts.Frequency)}}
}

func (a *pwmAct) openLocked() error {
	a.drv = gpio.NewDirectPinDriver(a.s.hw, a.cfg.Pins["pin"], gpio.WithName(a.cfg.Name))
	return nil
}

func (a *pwmAct) initialLocked() error {
	if a.cfg.Initial == "" {
		return nil
	}
	d, err := strconv.ParseFloat(a.cfg.Initial, 64)
	if err != nil {
		return fmt.Errorf("initial %q: %w", a.cfg.Initial, err)
	}
	_, err = a.writeLocked(d)
	return err
}

// writeLocked writes a duty (0–1) on gobot's 0–255 scale and returns the
// byte written.
func (a *pwmAct) writeLocked(duty float64) (byte, error) {
	v := byte(math.Round(duty * 255))
	if err := a.drv.PwmWrite(v); err != nil {
		return 0, a.hwErrLocked(err)
	}
	a.clearFaultLocked()
	a.duty = duty
	a.setStateLocked(a.idleState())
	a.observe("duty", duty, "")
	return v, nil
}

func (a *pwmAct) safeLocked(estop bool) (string, error) {
	a.cancelTaskLocked()
	if estop && a.opts.OnEStop == "hold" {
		return "held at duty " + num(a.duty) + " (on_estop: hold)", nil
	}
	if _, err := a.writeLocked(0); err != nil {
		return "", err
	}
	return "off", nil
}

func (a *pwmAct) idleState() string {
	if a.duty == 0 {
		return "off"
	}
	return "duty " + num(a.duty)
}

type dutyParams struct {
	Duty float64 `json:"duty"`
}

func (a *pwmAct) tools() []tools.Tool {
	viol := "refused"
	if a.clamp {
		viol = "clamped"
	}
	return []tools.Tool{
		tools.Typed(a.spec("set",
			fmt.Sprintf("Set the %s PWM output's duty cycle, 0 to 1 (envelope %s–%s; values outside are %s). Use %s.off to switch it off.", a.cfg.Name, num(a.lo), num(a.hi), viol, a.cfg.Name),
			fmt.Sprintf(`{"type":"object","properties":{
  "duty":{"type":"number",%s,"description":"fraction of each period the output is high; envelope %s–%s"}},
"required":["duty"],"additionalProperties":false}`, rangeSchema(a.lo, a.hi, 0, a.clamp), num(a.lo), num(a.hi)), ""),
			func(ctx context.Context, p dutyParams) (tools.Result, error) {
				c := command{tool: a.cfg.Name + ".set", params: marshal(p)}
				return a.do(ctx, a, c, func() (outcome, error) {
					d, note, err := bound("duty", p.Duty, a.lo, a.hi, "", a.clamp)
					if err != nil {
						return outcome{}, err
					}
					var out outcome
					if note != "" {
						out.notes = append(out.notes, note)
					}
					v, err := a.writeLocked(d)
					if err != nil {
						return outcome{}, err
					}
					out.applied = map[string]any{"duty": d, "level": v}
					return out, nil
				})
			}),
		tools.Func(a.spec("off", fmt.Sprintf("Switch the %s PWM output off (duty 0).", a.cfg.Name), "", ""),
			func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
				c := command{tool: a.cfg.Name + ".off", params: json.RawMessage("{}"), safe: true}
				return a.do(ctx, a, c, func() (outcome, error) {
					if _, err := a.writeLocked(0); err != nil {
						return outcome{}, err
					}
					return outcome{applied: map[string]any{"duty": 0}}, nil
				})
			}),
	}
}
