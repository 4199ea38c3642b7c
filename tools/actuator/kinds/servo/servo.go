// Package servo is the hobby-servo actuator kinds: servo, on a PWM pin
// through gobot's ServoDriver (0–180°), and pca9685_servo, on one channel
// of a PCA9685 PWM controller on I2C (periph's driver; several servos share
// a chip, one channel each). Moves ramp at limits.max_rate; the envelope is
// min_angle/max_angle (default 0–180°). Each is a Home Assistant number.
//
// Sample blocks:
//
//   - name: pan
//     kind: servo
//     pins: {pin: "12"}
//     limits: {min_angle: 10, max_angle: 170, max_rate: 90}
//     initial: "90"
//     options: {pulse_min: 500us, pulse_max: 2500us}
//   - name: tilt
//     kind: pca9685_servo
//     address: 0x40           # the default; bus defaults to the header's
//     channel: 1              # 0–15
//     options: {range: 270, frequency: 50}
package servo

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

// RampStep is the interval between two writes of a ramped servo move: one
// frame of the 50 Hz servo signal, so no step is wasted.
const RampStep = 20 * time.Millisecond

// The two kinds this package registers.
const (
	pinKind = "servo"
	pcaKind = "pca9685_servo"
)

func init() {
	for _, kind := range []string{pinKind, pcaKind} {
		k := actuator.Kind{
			Initial: func(initial string) string {
				if _, err := strconv.ParseFloat(initial, 64); err != nil {
					return fmt.Sprintf("%q: expected a number for kind %s", initial, kind)
				}
				return ""
			},
			StopRank: 4, // a servo only ends its ramp: last
			New:      func(b *actuator.Base) (actuator.Actuator, error) { return newServo(b) },
		}
		if kind == pinKind {
			k.Pins = []string{"pin"}
		} else {
			k.I2C, k.Address, k.Channels, k.Chip = true, 0x40, 16, "PCA9685" // A0–A5 open
		}
		actuator.Register(kind, k)
	}
}

// servoLimits are the `limits:` of servo and pca9685_servo; the angles
// default to 0° and 180° (or the range, when it is smaller).
type servoLimits struct {
	actuator.Envelope `yaml:",inline"`
	MinAngle          float64 `yaml:"min_angle"` // degrees
	MaxAngle          float64 `yaml:"max_angle"`
	MaxRate           float64 `yaml:"max_rate"` // degrees per second; 0: no ramp
}

// servoOptions are the `options:` of servo and pca9685_servo.
type servoOptions struct {
	// PulseMin and PulseMax are the pulse widths at 0° and at Range degrees
	// (defaults 500 µs and 2500 µs, an SG90/MG996R; check the datasheet).
	PulseMin time.Duration `yaml:"pulse_min"`
	PulseMax time.Duration `yaml:"pulse_max"`
	// Range is the angle the pulse range spans (pca9685_servo only; a gpio
	// servo goes through gobot's ServoDriver, which is 0–180°).
	Range float64 `yaml:"range"`
	// Frequency of the PCA9685 outputs in Hz (pca9685_servo only; default
	// 50). All channels of one chip share it.
	Frequency float64 `yaml:"frequency"`
}

// servoAct is a hobby servo on a PWM pin (gobot's ServoDriver) or on a
// PCA9685 channel. Moves are ramped at limits.max_rate.
type servoAct struct {
	*actuator.Base
	opts   servoOptions
	lo, hi float64 // envelope
	rate   float64 // degrees per second; 0: jump
	clamp  bool

	write func(deg float64) (float64, error) // writes an angle, returns the angle written

	pos    float64 // last angle written
	known  bool    // pos is known (something was written)
	target float64
	moving *move // the current ramp, if any
}

// move is one ramped move, for a caller that waits for it.
type move struct {
	done    chan struct{} // closed when the ramp ends
	arrived bool          // it ended at its target (set before done is closed)
}

func newServo(b *actuator.Base) (*servoAct, error) {
	cfg := b.Config()
	a := &servoAct{Base: b, opts: servoOptions{PulseMin: 500 * time.Microsecond, PulseMax: 2500 * time.Microsecond, Range: 180, Frequency: 50}}
	if err := cfg.DecodeOptions(&a.opts); err != nil {
		return nil, err
	}
	l := servoLimits{MinAngle: 0, MaxAngle: min(180, a.opts.Range)}
	if err := b.DecodeLimits(&l); err != nil {
		return nil, err
	}
	switch {
	case l.MinAngle < 0 || l.MinAngle > 360:
		return nil, cfg.BadLimit("min_angle", "outside 0–360")
	case l.MaxAngle < 0 || l.MaxAngle > 360:
		return nil, cfg.BadLimit("max_angle", "outside 0–360")
	case l.MinAngle >= l.MaxAngle:
		return nil, cfg.BadLimit("max_angle", "must be greater than min_angle")
	case l.MaxRate < 0:
		return nil, cfg.BadLimit("max_rate", "must not be negative (degrees per second; 0: no ramp)")
	}
	a.lo, a.hi, a.rate, a.clamp = l.MinAngle, l.MaxAngle, l.MaxRate, l.Clamp()
	switch {
	case cfg.Kind == pinKind && a.opts.Range != 180:
		return nil, cfg.BadOption("range", "a servo on a pin is driven by gobot's ServoDriver, which spans 0–180°; use pulse_min/pulse_max to calibrate")
	case cfg.Kind == pinKind && a.opts.Frequency != 50:
		return nil, cfg.BadOption("frequency", "only pca9685_servo has it (a servo pin runs at 50 Hz)")
	case a.opts.Range <= 0 || a.opts.Range > 360:
		return nil, cfg.BadOption("range", "outside (0, 360]")
	case a.opts.PulseMin <= 0 || a.opts.PulseMax <= a.opts.PulseMin:
		return nil, cfg.BadOption("pulse_min", "must be positive and below pulse_max")
	case a.opts.Frequency < 24 || a.opts.Frequency > 1526:
		return nil, cfg.BadOption("frequency", "outside the PCA9685's 24–1526 Hz")
	case time.Duration(float64(time.Second)/a.opts.Frequency) <= a.opts.PulseMax:
		return nil, cfg.BadOption("pulse_max", "%s does not fit in one period at %s Hz", a.opts.PulseMax, actuator.Num(a.opts.Frequency))
	case a.lo < 0 || a.hi > a.opts.Range:
		return nil, fmt.Errorf("limits %s–%s° exceed the servo's range 0–%s°", actuator.Num(a.lo), actuator.Num(a.hi), actuator.Num(a.opts.Range))
	}
	if err := actuator.InitialInside(cfg.Initial, a.lo, a.hi, "°"); err != nil {
		return nil, err
	}
	return a, nil
}

func (a *servoAct) PWMPins() []actuator.PWMPin {
	if a.Config().Kind != pinKind {
		return nil
	}
	return []actuator.PWMPin{{Actuator: a.Name(), Pin: a.Config().Pins["pin"], Period: 20 * time.Millisecond, Servo: true,
		PulseMin: a.opts.PulseMin, PulseMax: a.opts.PulseMax}}
}

func (a *servoAct) OpenLocked() error {
	if a.Config().Kind == pinKind {
		d := gpio.NewServoDriver(a.Adaptor(), a.Config().Pins["pin"], gpio.WithName(a.Name()))
		a.write = func(deg float64) (float64, error) {
			w := math.Round(deg)
			return w, d.Move(uint8(w))
		}
		return nil
	}
	chip, err := a.pca9685()
	if err != nil {
		return err
	}
	ch := a.Config().Channel
	a.write = func(deg float64) (float64, error) {
		pulse := float64(a.opts.PulseMin) + deg/a.opts.Range*float64(a.opts.PulseMax-a.opts.PulseMin)
		return deg, chip.setPulse(ch, time.Duration(pulse))
	}
	return nil
}

func (a *servoAct) InitialLocked() error {
	// The position of a hobby servo cannot be read: the first write is
	// necessarily a jump, and it is this one, at start, where people expect it.
	return a.WriteInitial(a.writeLocked)
}

func (a *servoAct) writeLocked(deg float64) error {
	w, err := a.write(deg)
	if err != nil {
		return a.HWErrLocked(err)
	}
	a.ClearFaultLocked()
	a.pos, a.known, a.target = w, true, w
	a.SetStateLocked(a.IdleState())
	a.Observe("angle", w, "deg")
	return nil
}

func (a *servoAct) SafeLocked(bool) (string, error) {
	a.stopRampLocked()
	if !a.known {
		return "not moving", nil
	}
	return "holding " + actuator.Num(a.pos) + "°", nil
}

func (a *servoAct) stopRampLocked() {
	a.CancelTaskLocked()
	if a.moving != nil {
		close(a.moving.done)
		a.moving = nil
	}
	a.target = a.pos
}

func (a *servoAct) IdleState() string {
	if !a.known {
		return "unknown"
	}
	return "at " + actuator.Num(a.pos) + "°"
}

type angleParams struct {
	Degrees float64 `json:"degrees"`
	Wait    bool    `json:"wait"`
}

func (a *servoAct) Tools() []tools.Tool {
	env := fmt.Sprintf("the envelope is %s–%s°", actuator.Num(a.lo), actuator.Num(a.hi))
	if a.rate > 0 {
		env += fmt.Sprintf(", moves ramp at %s°/s", actuator.Num(a.rate))
	}
	viol := "refused"
	if a.clamp {
		viol = "clamped"
	}
	setAngle := a.Spec("set_angle",
		fmt.Sprintf("Turn the %s servo to an absolute angle in degrees (%s; angles outside are %s). Returns at once unless wait is true.", a.Name(), env, viol),
		fmt.Sprintf(`{"type":"object","properties":{
  "degrees":{"type":"number",%s,"description":"target angle; envelope %s–%s"},
  "wait":{"type":"boolean","default":false,"description":"return only when the servo has arrived"}},
"required":["degrees"],"additionalProperties":false}`, actuator.RangeSchema(a.lo, a.hi, 0, math.Inf(1), a.clamp), actuator.Num(a.lo), actuator.Num(a.hi)), "")
	setAngle.Entity = &tools.Entity{Platform: "number", Name: a.Name(), Param: "degrees", Min: a.lo, Max: a.hi, Step: 1, Unit: "°"}
	return []tools.Tool{
		tools.Typed(setAngle, func(ctx context.Context, p angleParams) (tools.Result, error) {
			return a.setAngle(ctx, "set_angle", p, false)
		}),
		tools.Typed(a.Spec("move_by",
			fmt.Sprintf("Turn the %s servo by a relative angle in degrees, positive or negative, from where it is heading (%s).", a.Name(), env),
			`{"type":"object","properties":{
  "degrees":{"type":"number","minimum":-360,"maximum":360,"description":"relative move"},
  "wait":{"type":"boolean","default":false}},
"required":["degrees"],"additionalProperties":false}`, ""),
			func(ctx context.Context, p angleParams) (tools.Result, error) {
				return a.setAngle(ctx, "move_by", p, true)
			}),
		tools.Func(a.Spec("stop", fmt.Sprintf("Stop the %s servo where it is (ends a ramped move).", a.Name()), "", ""),
			func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
				c := actuator.Command{Tool: a.Name() + ".stop", Params: []byte("{}"), Safe: true}
				return a.Do(ctx, c, func() (actuator.Outcome, error) {
					what, _ := a.SafeLocked(false)
					a.SetStateLocked(a.IdleState())
					return actuator.Outcome{Applied: map[string]any{"stopped": what}}, nil
				})
			}),
	}
}

func (a *servoAct) setAngle(ctx context.Context, fn string, p angleParams, relative bool) (tools.Result, error) {
	c := actuator.Command{Tool: a.Name() + "." + fn, Params: actuator.Marshal(p)}
	var mv *move
	res, err := a.Do(ctx, c, func() (actuator.Outcome, error) {
		want := p.Degrees
		if relative {
			if !a.known {
				return actuator.Outcome{}, actuator.Refuse(actuator.ErrEnvelope, "the position of %s is unknown; use set_angle first", a.Name())
			}
			want += a.target
		}
		deg, note, err := actuator.Bound("degrees", want, a.lo, a.hi, "°", a.clamp)
		if err != nil {
			return actuator.Outcome{}, err
		}
		var out actuator.Outcome
		if note != "" {
			out.Notes = append(out.Notes, note)
		}
		from, known := a.pos, a.known
		a.stopRampLocked()
		applied := map[string]any{"target": deg}
		if known {
			applied["from"] = from
		}
		switch {
		case !known || a.rate == 0 || deg == from:
			if !known && a.rate > 0 {
				out.Notes = append(out.Notes, "the position was unknown, so this move was not ramped (set `initial` in the board file to avoid the jump)")
			}
			if err := a.writeLocked(deg); err != nil {
				return actuator.Outcome{}, err
			}
			applied["angle"] = a.pos
		default:
			eta := time.Duration(math.Abs(deg-from) / a.rate * float64(time.Second))
			applied["eta_s"] = math.Round(eta.Seconds()*1000) / 1000
			a.target = deg
			mv = &move{done: make(chan struct{})}
			a.moving = mv
			start := a.Now()
			a.SetStateLocked(fmt.Sprintf("moving %s°→%s°", actuator.Num(from), actuator.Num(deg)))
			a.StartTaskLocked(RampStep, func(stop <-chan struct{}, t clock.Timer) { a.ramp(stop, t, from, deg, start) })
		}
		out.Applied = applied
		return out, nil
	})
	if err != nil || !p.Wait || mv == nil {
		return res, err
	}
	clock.Waiting(ctx) // the ramp steps on the clock: a replay moves it on now
	select {
	case <-mv.done:
		a.Lock()
		pos := a.pos
		a.Unlock()
		// Not pos == target: a gpio servo writes whole degrees.
		v := res.Value.(map[string]any)
		v["angle"], v["arrived"] = pos, mv.arrived
		if !mv.arrived {
			res.Notes = append(res.Notes, "the move was stopped before it arrived")
		}
		return res, nil
	case <-ctx.Done():
		return res, fmt.Errorf("stopped waiting (the move goes on): %w", context.Cause(ctx))
	}
}

// ramp moves from from to to at a.rate, one write per RampStep. The angle
// of each step comes from the time elapsed since start, so a late wake-up
// never slows the move down, and never speeds it beyond the rate either.
func (a *servoAct) ramp(stop <-chan struct{}, t clock.Timer, from, to float64, start time.Time) {
	dir := 1.0
	if to < from {
		dir = -1
	}
	for {
		if !a.NextLocked(stop, t) {
			return
		}
		p := from + dir*a.rate*a.Now().Sub(start).Seconds()
		last := (p-to)*dir >= -1e-9
		if last {
			p = to
		}
		w, err := a.write(p)
		if err != nil {
			_ = a.HWErrLocked(err)
			a.EndTaskLocked()
			a.stopRampLocked()
			a.SetStateLocked("stopped (write failed at " + actuator.Num(a.pos) + "°)")
			a.Unlock()
			return
		}
		a.pos, a.known = w, true
		a.Observe("angle", w, "deg")
		if last {
			if a.moving != nil { // this ramp's move: stop was checked under the lock
				a.moving.arrived = true
			}
			a.EndTaskLocked()
			a.stopRampLocked()
			a.SetStateLocked(a.IdleState())
			a.Unlock()
			return
		}
		t.Reset(RampStep)
		a.Unlock()
	}
}
