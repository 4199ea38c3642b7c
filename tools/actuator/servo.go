package actuator

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"gobot.io/x/gobot/v2/drivers/gpio"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
)

// rampStep is the interval between two writes of a ramped servo move: one
// frame of the 50 Hz servo signal, so no step is wasted.
const rampStep = 20 * time.Millisecond

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
	base
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

func newServo(s *Set, cfg board.Actuator) (*servoAct, error) {
	a := &servoAct{opts: servoOptions{PulseMin: 500 * time.Microsecond, PulseMax: 2500 * time.Microsecond, Range: 180, Frequency: 50}}
	a.init(s, cfg)
	if err := cfg.Options.Decode(&a.opts); err != nil {
		return nil, err
	}
	b := &a.base
	l := cfg.Limits
	a.lo, a.hi = 0, a.opts.Range
	if l.MinAngle != nil {
		a.lo = *l.MinAngle
	}
	if l.MaxAngle != nil {
		a.hi = *l.MaxAngle
	}
	if l.MaxRate != nil {
		a.rate = *l.MaxRate
	}
	a.clamp = l.OnViolation == "clamp"
	switch {
	case b.cfg.Kind == "servo" && a.opts.Range != 180:
		return nil, fmt.Errorf("options.range: a servo on a pin is driven by gobot's ServoDriver, which spans 0–180°; use pulse_min/pulse_max to calibrate")
	case b.cfg.Kind == "servo" && a.opts.Frequency != 50:
		return nil, fmt.Errorf("options.frequency: only pca9685_servo has it (a servo pin runs at 50 Hz)")
	case a.opts.Range <= 0 || a.opts.Range > 360:
		return nil, fmt.Errorf("options.range %s is outside (0, 360]", num(a.opts.Range))
	case a.opts.PulseMin <= 0 || a.opts.PulseMax <= a.opts.PulseMin:
		return nil, fmt.Errorf("options: pulse_min (%s) must be positive and below pulse_max (%s)", a.opts.PulseMin, a.opts.PulseMax)
	case a.opts.Frequency < 24 || a.opts.Frequency > 1526:
		return nil, fmt.Errorf("options.frequency %s Hz is outside the PCA9685's 24–1526 Hz", num(a.opts.Frequency))
	case time.Duration(float64(time.Second)/a.opts.Frequency) <= a.opts.PulseMax:
		return nil, fmt.Errorf("options: pulse_max %s does not fit in one period at %s Hz", a.opts.PulseMax, num(a.opts.Frequency))
	case a.lo < 0 || a.hi > a.opts.Range:
		return nil, fmt.Errorf("limits %s–%s° exceed the servo's range 0–%s°", num(a.lo), num(a.hi), num(a.opts.Range))
	}
	if err := initialInside(cfg.Initial, a.lo, a.hi, "°"); err != nil {
		return nil, err
	}
	return a, nil
}

// initialInside checks a numeric `initial` against the envelope: it is
// written at start without going through a tool, so the envelope must hold
// it here (board.Load checks it only when both bounds are set).
func initialInside(initial string, lo, hi float64, unit string) error {
	if initial == "" {
		return nil
	}
	v, err := strconv.ParseFloat(initial, 64)
	if err != nil {
		return fmt.Errorf("initial %q: %w", initial, err)
	}
	if !(v >= lo && v <= hi) { // NaN included
		return fmt.Errorf("initial %s%s is outside the envelope %s–%s%s", initial, unit, num(lo), num(hi), unit)
	}
	return nil
}

func (a *servoAct) pwmPins() []pwmPin {
	if a.cfg.Kind != "servo" {
		return nil
	}
	return []pwmPin{{actuator: a.cfg.Name, pin: a.cfg.Pins["pin"], period: 20 * time.Millisecond, servo: true,
		pulseMin: a.opts.PulseMin, pulseMax: a.opts.PulseMax}}
}

func (a *servoAct) openLocked() error {
	if a.cfg.Kind == "servo" {
		d := gpio.NewServoDriver(a.s.hw, a.cfg.Pins["pin"], gpio.WithName(a.cfg.Name))
		a.write = func(deg float64) (float64, error) {
			w := math.Round(deg)
			return w, d.Move(uint8(w))
		}
		return nil
	}
	chip, err := a.s.pca9685(a.cfg.Bus, uint16(a.cfg.Address), a.opts.Frequency)
	if err != nil {
		return err
	}
	ch := a.cfg.Channel
	a.write = func(deg float64) (float64, error) {
		pulse := float64(a.opts.PulseMin) + deg/a.opts.Range*float64(a.opts.PulseMax-a.opts.PulseMin)
		return deg, chip.setPulse(ch, time.Duration(pulse))
	}
	return nil
}

func (a *servoAct) initialLocked() error {
	if a.cfg.Initial == "" {
		return nil
	}
	deg, err := strconv.ParseFloat(a.cfg.Initial, 64)
	if err != nil {
		return fmt.Errorf("initial %q: %w", a.cfg.Initial, err)
	}
	// The position of a hobby servo cannot be read: the first write is
	// necessarily a jump, and it is this one, at start, where people expect it.
	return a.writeLocked(deg)
}

func (a *servoAct) writeLocked(deg float64) error {
	w, err := a.write(deg)
	if err != nil {
		return a.hwErrLocked(err)
	}
	a.clearFaultLocked()
	a.pos, a.known, a.target = w, true, w
	a.setStateLocked(a.idleState())
	a.observe("angle", w, "deg")
	return nil
}

func (a *servoAct) safeLocked(bool) (string, error) {
	a.stopRampLocked()
	if !a.known {
		return "not moving", nil
	}
	return "holding " + num(a.pos) + "°", nil
}

func (a *servoAct) stopRampLocked() {
	a.cancelTaskLocked()
	if a.moving != nil {
		close(a.moving.done)
		a.moving = nil
	}
	a.target = a.pos
}

func (a *servoAct) idleState() string {
	if !a.known {
		return "unknown"
	}
	return "at " + num(a.pos) + "°"
}

type angleParams struct {
	Degrees float64 `json:"degrees"`
	Wait    bool    `json:"wait"`
}

func (a *servoAct) tools() []tools.Tool {
	env := fmt.Sprintf("the envelope is %s–%s°", num(a.lo), num(a.hi))
	if a.rate > 0 {
		env += fmt.Sprintf(", moves ramp at %s°/s", num(a.rate))
	}
	viol := "refused"
	if a.clamp {
		viol = "clamped"
	}
	return []tools.Tool{
		tools.Typed(a.spec("set_angle",
			fmt.Sprintf("Turn the %s servo to an absolute angle in degrees (%s; angles outside are %s). Returns at once unless wait is true.", a.cfg.Name, env, viol),
			fmt.Sprintf(`{"type":"object","properties":{
  "degrees":{"type":"number",%s,"description":"target angle; envelope %s–%s"},
  "wait":{"type":"boolean","default":false,"description":"return only when the servo has arrived"}},
"required":["degrees"],"additionalProperties":false}`, rangeSchema(a.lo, a.hi, 0, a.clamp), num(a.lo), num(a.hi)), ""),
			func(ctx context.Context, p angleParams) (tools.Result, error) {
				return a.setAngle(ctx, "set_angle", p, false)
			}),
		tools.Typed(a.spec("move_by",
			fmt.Sprintf("Turn the %s servo by a relative angle in degrees, positive or negative, from where it is heading (%s).", a.cfg.Name, env),
			`{"type":"object","properties":{
  "degrees":{"type":"number","minimum":-360,"maximum":360,"description":"relative move"},
  "wait":{"type":"boolean","default":false}},
"required":["degrees"],"additionalProperties":false}`, ""),
			func(ctx context.Context, p angleParams) (tools.Result, error) {
				return a.setAngle(ctx, "move_by", p, true)
			}),
		tools.Func(a.spec("stop", fmt.Sprintf("Stop the %s servo where it is (ends a ramped move).", a.cfg.Name), "", ""),
			func(ctx context.Context, _ json.RawMessage) (tools.Result, error) {
				c := command{tool: a.cfg.Name + ".stop", params: []byte("{}"), safe: true}
				return a.do(ctx, a, c, func() (outcome, error) {
					what, _ := a.safeLocked(false)
					a.setStateLocked(a.idleState())
					return outcome{applied: map[string]any{"stopped": what}}, nil
				})
			}),
	}
}

func (a *servoAct) setAngle(ctx context.Context, fn string, p angleParams, relative bool) (tools.Result, error) {
	c := command{tool: a.cfg.Name + "." + fn, params: marshal(p)}
	var mv *move
	res, err := a.do(ctx, a, c, func() (outcome, error) {
		want := p.Degrees
		if relative {
			if !a.known {
				return outcome{}, refuse(ErrEnvelope, "the position of %s is unknown; use set_angle first", a.cfg.Name)
			}
			want += a.target
		}
		deg, note, err := bound("degrees", want, a.lo, a.hi, "°", a.clamp)
		if err != nil {
			return outcome{}, err
		}
		var out outcome
		if note != "" {
			out.notes = append(out.notes, note)
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
				out.notes = append(out.notes, "the position was unknown, so this move was not ramped (set `initial` in the board file to avoid the jump)")
			}
			if err := a.writeLocked(deg); err != nil {
				return outcome{}, err
			}
			applied["angle"] = a.pos
		default:
			eta := time.Duration(math.Abs(deg-from) / a.rate * float64(time.Second))
			applied["eta_s"] = math.Round(eta.Seconds()*1000) / 1000
			a.target = deg
			mv = &move{done: make(chan struct{})}
			a.moving = mv
			start := a.s.clk.Now()
			a.setStateLocked(fmt.Sprintf("moving %s°→%s°", num(from), num(deg)))
			a.startTaskLocked(rampStep, func(stop <-chan struct{}, t clock.Timer) { a.ramp(stop, t, from, deg, start) })
		}
		out.applied = applied
		return out, nil
	})
	if err != nil || !p.Wait || mv == nil {
		return res, err
	}
	select {
	case <-mv.done:
		a.mu.Lock()
		pos := a.pos
		a.mu.Unlock()
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

// ramp moves from from to to at a.rate, one write per rampStep. The angle
// of each step comes from the time elapsed since start, so a late wake-up
// never slows the move down, and never speeds it beyond the rate either.
func (a *servoAct) ramp(stop <-chan struct{}, t clock.Timer, from, to float64, start time.Time) {
	dir := 1.0
	if to < from {
		dir = -1
	}
	for {
		if !a.nextLocked(stop, t) {
			return
		}
		p := from + dir*a.rate*a.s.clk.Now().Sub(start).Seconds()
		last := (p-to)*dir >= -1e-9
		if last {
			p = to
		}
		w, err := a.write(p)
		if err != nil {
			_ = a.hwErrLocked(err)
			a.endTaskLocked()
			a.stopRampLocked()
			a.setStateLocked("stopped (write failed at " + num(a.pos) + "°)")
			a.mu.Unlock()
			return
		}
		a.pos, a.known = w, true
		a.observe("angle", w, "deg")
		if last {
			if a.moving != nil { // this ramp's move: stop was checked under the lock
				a.moving.arrived = true
			}
			a.endTaskLocked()
			a.stopRampLocked()
			a.setStateLocked(a.idleState())
			a.mu.Unlock()
			return
		}
		t.Reset(rampStep)
		a.mu.Unlock()
	}
}
