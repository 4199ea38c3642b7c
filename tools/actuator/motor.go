package actuator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// motorOptions are the `options:` of a motor.
type motorOptions struct {
	// Frequency of the speed pin's PWM in Hz; 0 keeps the platform default
	// (100 Hz with gobot's sysfs PWM).
	Frequency float64 `yaml:"frequency"`
}

// motorAct is a DC motor on an H-bridge (L298N, TB6612): gobot's
// MotorDriver with forward/backward direction pins and a PWM speed pin.
type motorAct struct {
	base
	opts     motorOptions
	drv      *gpio.MotorDriver
	maxSpeed float64
	deadman  time.Duration
	clamp    bool

	speed float64
	dir   string // forward | backward; "" when stopped
}

func newMotor(s *Set, cfg board.Actuator) (*motorAct, error) {
	a := &motorAct{maxSpeed: 1, deadman: cfg.Limits.Deadman, clamp: cfg.Limits.OnViolation == "clamp"}
	a.init(s, cfg)
	b := &a.base
	if err := cfg.Options.Decode(&a.opts); err != nil {
		return nil, err
	}
	if b.cfg.Limits.MaxSpeed != nil {
		a.maxSpeed = *b.cfg.Limits.MaxSpeed
	}
	if a.opts.Frequency < 0 || a.opts.Frequency > 100000 {
		return nil, fmt.Errorf("options.frequency %s Hz is outside 0–100000", num(a.opts.Frequency))
	}
	return a, nil
}

func (a *motorAct) pwmPins() []pwmPin {
	return []pwmPin{{actuator: a.cfg.Name, pin: a.cfg.Pins["pwm"], period: period(a.opts.Frequency)}}
}

func period(hz float64) time.Duration {
	if hz <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / hz)
}

func (a *motorAct) openLocked() error {
	a.drv = gpio.NewMotorDriver(a.s.hw, a.cfg.Pins["pwm"], gpio.WithName(a.cfg.Name),
		gpio.WithMotorForwardPin(a.cfg.Pins["forward"]), gpio.WithMotorBackwardPin(a.cfg.Pins["backward"]))
	return nil
}

// initialLocked stops the motor whatever `initial` says: a motor whose
// state is unknown at start is a motor that may be running.
func (a *motorAct) initialLocked() error { return a.stopLocked() }

// stopLocked cuts the speed first, then releases both direction pins (the
// H-bridge coasts).
func (a *motorAct) stopLocked() error {
	a.cancelTaskLocked()
	err := a.drv.SetSpeed(0)
	if err == nil {
		err = a.drv.SetDirection("none")
	}
	if err != nil {
		return a.hwErrLocked(err)
	}
	a.clearFaultLocked()
	a.speed, a.dir = 0, ""
	a.setStateLocked("stopped")
	a.observe("speed", 0, "")
	return nil
}

func (a *motorAct) safeLocked(bool) (string, error) {
	if err := a.stopLocked(); err != nil {
		return "", err
	}
	return "stopped", nil
}

func (a *motorAct) idleState() string {
	if a.speed == 0 {
		return "stopped"
	}
	return fmt.Sprintf("%s %s", a.dir, num(a.speed))
}

type driveParams struct {
	Speed     float64 `json:"speed"`
	Direction string  `json:"direction"`
	Duration  float64 `json:"duration"`
}

func (a *motorAct) tools() []tools.Tool {
	dm := ""
	if a.deadman > 0 {
		dm = fmt.Sprintf(" Dead-man: it stops by itself unless the command is repeated within %s.", a.deadman)
	}
	viol := "refused"
	if a.clamp {
		viol = "clamped"
	}
	return []tools.Tool{
		tools.Typed(a.spec("drive",
			fmt.Sprintf("Run the %s motor forward or backward at a speed from 0 to 1 (at most %s; faster is %s), optionally for a duration in seconds.%s", a.cfg.Name, num(a.maxSpeed), viol, dm),
			fmt.Sprintf(`{"type":"object","properties":{
  "speed":{"type":"number",%s,"description":"0 stops; envelope max %s"},
  "direction":{"type":"string","enum":["forward","backward"],"default":"forward"},
  "duration":{"type":"number","minimum":0,"maximum":3600,"default":0,"description":"seconds, then it stops; 0: until stopped (or the dead-man timeout)"}},
"required":["speed"],"additionalProperties":false}`, rangeSchema(0, a.maxSpeed, 0, a.clamp), num(a.maxSpeed)), ""),
			func(ctx context.Context, p driveParams) (tools.Result, error) { return a.drive(ctx, p) }),
		tools.Func(a.spec("stop", fmt.Sprintf("Stop the %s motor.", a.cfg.Name), "", ""),
			func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
				c := command{tool: a.cfg.Name + ".stop", params: json.RawMessage("{}"), safe: true}
				return a.do(ctx, a, c, func() (outcome, error) {
					if err := a.stopLocked(); err != nil {
						return outcome{}, err
					}
					return outcome{applied: map[string]any{"speed": 0}}, nil
				})
			}),
	}
}

func (a *motorAct) drive(ctx context.Context, p driveParams) (tools.Result, error) {
	if p.Direction == "" {
		p.Direction = "forward"
	}
	c := command{tool: a.cfg.Name + ".drive", params: marshal(p), safe: p.Speed == 0}
	return a.do(ctx, a, c, func() (outcome, error) {
		speed, note, err := bound("speed", p.Speed, 0, a.maxSpeed, "", a.clamp)
		if err != nil {
			return outcome{}, err
		}
		var out outcome
		if note != "" {
			out.notes = append(out.notes, note)
		}
		if speed == 0 {
			if err := a.stopLocked(); err != nil {
				return outcome{}, err
			}
			out.applied = map[string]any{"speed": 0}
			return out, nil
		}
		a.cancelTaskLocked()
		duty := byte(math.Round(speed * 255))
		if a.dir != "" && a.dir != p.Direction {
			// Reversing: cut the power before the direction pins change, so
			// the bridge never drives the motor while one pin has switched
			// and the other has not. (It does not wait for the motor to spin
			// down; a stop command first is gentler on a gearbox.)
			if err := a.drv.SetSpeed(0); err != nil {
				return outcome{}, a.hwErrLocked(err)
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
			return outcome{}, a.hwErrLocked(err)
		}
		a.clearFaultLocked()
		a.speed, a.dir = speed, p.Direction
		signed := speed
		if p.Direction == "backward" {
			signed = -speed
		}
		a.observe("speed", signed, "")
		run, why := seconds(p.Duration), "duration elapsed"
		if a.deadman > 0 && (run == 0 || run > a.deadman) {
			run, why = a.deadman, fmt.Sprintf("dead-man: not refreshed within %s", a.deadman)
			out.notes = append(out.notes, fmt.Sprintf("stops in %s unless the command is repeated (dead-man)", a.deadman))
		}
		applied := map[string]any{"speed": speed, "direction": p.Direction, "duty": duty}
		state := a.idleState()
		if run > 0 {
			applied["stops_in_s"] = run.Seconds()
			state += fmt.Sprintf(" (stops in %s)", run)
			a.startTaskLocked(run, func(stop <-chan struct{}, t clock.Timer) { a.stopAfter(stop, t, why) })
		}
		a.setStateLocked(state)
		out.applied = applied
		return out, nil
	})
}

// stopAfter stops the motor when t fires, unless cancelled (by a refresh,
// a stop or an e-stop) first.
func (a *motorAct) stopAfter(stop <-chan struct{}, t clock.Timer, why string) {
	if !a.nextLocked(stop, t) {
		return
	}
	a.endTaskLocked()
	err := a.stopLocked()
	deadman := why != "duration elapsed"
	if err == nil && deadman {
		a.setStateLocked("stopped (dead-man)")
	}
	a.mu.Unlock()
	caller := "timer"
	if deadman {
		caller = "deadman"
		a.s.world.Record(worldmodel.Event{Kind: "deadman_stop", Source: a.cfg.Name, Priority: worldmodel.Normal,
			Message: fmt.Sprintf("%s stopped: %s", a.cfg.Name, why)})
	}
	a.s.audit.record(Entry{Time: a.s.clk.Now(), Caller: caller, Tool: a.cfg.Name + ".stop", Actuator: a.cfg.Name,
		Applied: marshal(map[string]any{"speed": 0}), Result: resultOf(err), Error: errString(err), Notes: []string{why}})
}
