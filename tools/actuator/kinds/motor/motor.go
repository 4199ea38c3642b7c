// Package motor is the motor actuator kind: a DC motor on an H-bridge
// (L298N, TB6612) through gobot's MotorDriver, with forward/backward
// direction pins and a PWM speed pin. Its envelope is max_speed (default 1)
// and a dead-man timeout; `initial` can only be "stop" (a motor whose state
// is unknown at start is a motor that may be running, so it is stopped
// whatever `initial` says).
//
// A sample block:
//
//   - name: drive
//     kind: motor
//     pins: {forward: "29", backward: "31", pwm: "33"}
//     limits: {max_speed: 0.6, deadman: 2s}
//     options: {frequency: 1000}   # Hz of the speed pin; 0: the platform default
package motor

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func init() {
	actuator.Register("motor", actuator.Kind{
		Pins: []string{"forward", "backward", "pwm"},
		Initial: func(initial string) string {
			if initial != "stop" {
				return "not one of stop"
			}
			return ""
		},
		StopRank: 0, // the most dangerous output stops first
		New:      func(b *actuator.Base) (actuator.Actuator, error) { return newMotor(b) },
	})
}

// motorLimits are the `limits:` of a motor, with their defaults.
type motorLimits struct {
	actuator.Envelope `yaml:",inline"`
	MaxSpeed          float64 `yaml:"max_speed"` // (0, 1]
	// Deadman stops the motor when its command is not refreshed within
	// it; 0 off.
	Deadman time.Duration `yaml:"deadman"`
}

// motorOptions are the `options:` of a motor.
type motorOptions struct {
	// Frequency of the speed pin's PWM in Hz; 0 keeps the platform default
	// (100 Hz with gobot's sysfs PWM).
	Frequency float64 `yaml:"frequency"`
}

// motorAct is a DC motor on an H-bridge (L298N, TB6612): gobot's
// MotorDriver with forward/backward direction pins and a PWM speed pin.
type motorAct struct {
	*actuator.Base
	opts     motorOptions
	drv      *gpio.MotorDriver
	maxSpeed float64
	deadman  time.Duration
	clamp    bool

	speed float64
	dir   string // forward | backward; "" when stopped
}

func newMotor(b *actuator.Base) (*motorAct, error) {
	cfg := b.Config()
	a := &motorAct{Base: b}
	if err := cfg.DecodeOptions(&a.opts); err != nil {
		return nil, err
	}
	l := motorLimits{MaxSpeed: 1}
	if err := b.DecodeLimits(&l); err != nil {
		return nil, err
	}
	switch {
	case l.MaxSpeed <= 0 || l.MaxSpeed > 1:
		return nil, cfg.BadLimit("max_speed", "outside (0, 1]")
	case l.Deadman < 0:
		return nil, cfg.BadLimit("deadman", "must not be negative")
	}
	a.maxSpeed, a.deadman, a.clamp = l.MaxSpeed, l.Deadman, l.Clamp()
	if a.opts.Frequency < 0 || a.opts.Frequency > 100000 {
		return nil, b.Config().BadOption("frequency", "outside 0–100000 Hz")
	}
	return a, nil
}

func (a *motorAct) PWMPins() []actuator.PWMPin {
	return []actuator.PWMPin{{Actuator: a.Name(), Pin: a.Config().Pins["pwm"], Period: actuator.Period(a.opts.Frequency)}}
}

func (a *motorAct) OpenLocked() error {
	a.drv = gpio.NewMotorDriver(a.Adaptor(), a.Config().Pins["pwm"], gpio.WithName(a.Name()),
		gpio.WithMotorForwardPin(a.Config().Pins["forward"]), gpio.WithMotorBackwardPin(a.Config().Pins["backward"]))
	return nil
}

// initialLocked stops the motor whatever `initial` says: a motor whose
// state is unknown at start is a motor that may be running.
func (a *motorAct) InitialLocked() error { return a.stopLocked() }

// stopLocked cuts the speed first, then releases both direction pins (the
// H-bridge coasts).
func (a *motorAct) stopLocked() error {
	a.CancelTaskLocked()
	err := a.drv.SetSpeed(0)
	if err == nil {
		err = a.drv.SetDirection("none")
	}
	if err != nil {
		return a.HWErrLocked(err)
	}
	a.ClearFaultLocked()
	a.speed, a.dir = 0, ""
	a.SetStateLocked("stopped")
	a.Observe("speed", 0, "")
	return nil
}

func (a *motorAct) SafeLocked(bool) (string, error) {
	if err := a.stopLocked(); err != nil {
		return "", err
	}
	return "stopped", nil
}

func (a *motorAct) IdleState() string {
	if a.speed == 0 {
		return "stopped"
	}
	return fmt.Sprintf("%s %s", a.dir, actuator.Num(a.speed))
}

type driveParams struct {
	Speed     float64 `json:"speed"`
	Direction string  `json:"direction"`
	Duration  float64 `json:"duration"`
}

func (a *motorAct) Tools() []tools.Tool {
	dm := ""
	if a.deadman > 0 {
		dm = fmt.Sprintf(" Dead-man: it stops by itself unless the command is repeated within %s.", a.deadman)
	}
	viol := "refused"
	if a.clamp {
		viol = "clamped"
	}
	return []tools.Tool{
		tools.Typed(a.Spec("drive",
			fmt.Sprintf("Run the %s motor forward or backward at a speed from 0 to 1 (at most %s; faster is %s), optionally for a duration in seconds.%s", a.Name(), actuator.Num(a.maxSpeed), viol, dm),
			fmt.Sprintf(`{"type":"object","properties":{
  "speed":{"type":"number",%s,"description":"0 stops; envelope max %s"},
  "direction":{"type":"string","enum":["forward","backward"],"default":"forward"},
  "duration":{"type":"number","minimum":0,"maximum":3600,"default":0,"description":"seconds, then it stops; 0: until stopped (or the dead-man timeout)"}},
"required":["speed"],"additionalProperties":false}`, actuator.RangeSchema(0, a.maxSpeed, 0, 1, a.clamp), actuator.Num(a.maxSpeed)), ""),
			func(ctx context.Context, p driveParams) (tools.Result, error) { return a.drive(ctx, p) }),
		tools.Func(a.Spec("stop", fmt.Sprintf("Stop the %s motor.", a.Name()), "", ""),
			func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
				c := actuator.Command{Tool: a.Name() + ".stop", Params: json.RawMessage("{}"), Safe: true}
				return a.Do(ctx, c, func() (actuator.Outcome, error) {
					if err := a.stopLocked(); err != nil {
						return actuator.Outcome{}, err
					}
					return actuator.Outcome{Applied: map[string]any{"speed": 0}}, nil
				})
			}),
	}
}

func (a *motorAct) drive(ctx context.Context, p driveParams) (tools.Result, error) {
	if p.Direction == "" {
		p.Direction = "forward"
	}
	c := actuator.Command{Tool: a.Name() + ".drive", Params: actuator.Marshal(p), Safe: p.Speed == 0}
	return a.Do(ctx, c, func() (actuator.Outcome, error) {
		speed, note, err := actuator.Bound("speed", p.Speed, 0, a.maxSpeed, "", a.clamp)
		if err != nil {
			return actuator.Outcome{}, err
		}
		var out actuator.Outcome
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		if speed == 0 {
			if err := a.stopLocked(); err != nil {
				return actuator.Outcome{}, err
			}
			out.Applied = map[string]any{"speed": 0}
			return out, nil
		}
		a.CancelTaskLocked()
		duty := byte(math.Round(speed * 255))
		if a.dir != "" && a.dir != p.Direction {
			// Reversing: cut the power before the direction pins change, so
			// the bridge never drives the motor while one pin has switched
			// and the other has not. (It does not wait for the motor to spin
			// down; a stop command first is gentler on a gearbox.)
			if err := a.drv.SetSpeed(0); err != nil {
				return actuator.Outcome{}, a.HWErrLocked(err)
			}
		}
		if p.Direction == "forward" {
			err = a.drv.Forward(duty)
		} else {
			err = a.drv.Backward(duty)
		}
		if err != nil {
			// Half-applied (direction set, speed not): stop rather than guess.
			_ = a.stopLocked()
			return actuator.Outcome{}, a.HWErrLocked(err)
		}
		a.ClearFaultLocked()
		a.speed, a.dir = speed, p.Direction
		signed := speed
		if p.Direction == "backward" {
			signed = -speed
		}
		a.Observe("speed", signed, "")
		run, why := actuator.Seconds(p.Duration), "duration elapsed"
		if a.deadman > 0 && (run == 0 || run > a.deadman) {
			run, why = a.deadman, fmt.Sprintf("dead-man: not refreshed within %s", a.deadman)
			out.Notes = append(out.Notes, fmt.Sprintf("stops in %s unless the command is repeated (dead-man)", a.deadman))
		}
		applied := map[string]any{"speed": speed, "direction": p.Direction, "duty": duty}
		state := a.IdleState()
		if run > 0 {
			applied["stops_in_s"] = run.Seconds()
			state += fmt.Sprintf(" (stops in %s)", run)
			a.StartTaskLocked(run, func(stop <-chan struct{}, t clock.Timer) { a.stopAfter(stop, t, why) })
		}
		a.SetStateLocked(state)
		out.Applied = applied
		return out, nil
	})
}

// stopAfter stops the motor when t fires, unless cancelled (by a refresh,
// a stop or an e-stop) first.
func (a *motorAct) stopAfter(stop <-chan struct{}, t clock.Timer, why string) {
	if !a.NextLocked(stop, t) {
		return
	}
	a.EndTaskLocked()
	err := a.stopLocked()
	deadman := why != "duration elapsed"
	if err == nil && deadman {
		a.SetStateLocked("stopped (dead-man)")
	}
	a.Unlock()
	caller := "timer"
	if deadman {
		caller = "deadman"
		a.RecordEvent(worldmodel.Event{Kind: "deadman_stop", Source: a.Name(), Priority: worldmodel.Normal,
			Message: fmt.Sprintf("%s stopped: %s", a.Name(), why)})
	}
	a.AuditBackground(caller, a.Name()+".stop", map[string]any{"speed": 0}, err, why)
}
