// Package dimmer is the example actuator kind of docs/add-an-actuator.md:
// a lamp dimmed by PWM on one pin, with a gamma-corrected brightness. It is
// complete (config, defaults, validation, a skill and a Home Assistant
// hint) but not among the built-in kinds: a board can use it only in a
// binary that imports this package, which the tests of plugin/actuators do.
//
// A sample block:
//
//   - name: desk
//     kind: dimmer
//     pins: {pin: "12"}
//     limits: {max_duty: 0.8}     # the envelope: at most 80 % duty
//     initial: "0"
//     options: {gamma: 2.2}       # perceived brightness → duty
package dimmer

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

func init() {
	actuator.Register("dimmer", actuator.Kind{
		Pins:     []string{"pin"},
		Initial:  checkInitial,
		StopRank: 3, // a light: after motors and power outputs
		New:      func(b *actuator.Base) (actuator.Actuator, error) { return newDimmer(b) },
	})
}

// checkInitial runs when the board is loaded, so a bad `initial` is
// reported with its file:line:col.
func checkInitial(initial string) string {
	v, err := strconv.ParseFloat(initial, 64)
	if err != nil || v < 0 || v > 1 {
		return fmt.Sprintf("%q: expected a brightness from 0 to 1", initial)
	}
	return ""
}

// limits are the block's `limits:`, with their defaults: the kind's own
// key, and the ones every kind shares (rate_limit, on_violation) through
// actuator.Envelope.
type limits struct {
	actuator.Envelope `yaml:",inline"`
	// MaxDuty caps the duty whatever brightness is asked for.
	MaxDuty float64 `yaml:"max_duty"`
}

// options are the block's `options:`, with their defaults.
type options struct {
	// Gamma maps perceived brightness to duty: duty = level^gamma.
	Gamma float64 `yaml:"gamma"`
}

type dimmer struct {
	*actuator.Base
	opts  options
	max   float64 // envelope: the highest duty
	level float64
}

func newDimmer(b *actuator.Base) (*dimmer, error) {
	d := &dimmer{Base: b, opts: options{Gamma: 2.2}}
	// Unknown keys and wrong types come back as file:line:col errors, for
	// the options and the limits alike.
	if err := b.Config().DecodeOptions(&d.opts); err != nil {
		return nil, err
	}
	if d.opts.Gamma < 1 || d.opts.Gamma > 3 {
		return nil, b.Config().BadOption("gamma", "outside 1–3")
	}
	l := limits{MaxDuty: 1}
	if err := b.DecodeLimits(&l); err != nil {
		return nil, err
	}
	if l.MaxDuty <= 0 || l.MaxDuty > 1 {
		return nil, b.Config().BadLimit("max_duty", "outside (0, 1]")
	}
	d.max = l.MaxDuty
	return d, nil
}

func (d *dimmer) PWMPins() []actuator.PWMPin {
	return []actuator.PWMPin{{Actuator: d.Name(), Pin: d.Config().Pins["pin"]}}
}

// OpenLocked has no driver to build: the adaptor writes the pin directly.
func (d *dimmer) OpenLocked() error { return nil }

func (d *dimmer) InitialLocked() error {
	return d.WriteInitial(func(level float64) error {
		_, err := d.writeLocked(level)
		return err
	})
}

// writeLocked sets a brightness; the duty is capped by the envelope.
func (d *dimmer) writeLocked(level float64) (float64, error) {
	duty := math.Min(math.Pow(level, d.opts.Gamma), d.max)
	if err := d.Adaptor().PwmWrite(d.Config().Pins["pin"], byte(math.Round(duty*255))); err != nil {
		return 0, d.HWErrLocked(err)
	}
	d.ClearFaultLocked()
	d.level = level
	d.SetStateLocked(d.IdleState())
	d.Observe("level", level, "")
	return duty, nil
}

func (d *dimmer) SafeLocked(bool) (string, error) {
	if _, err := d.writeLocked(0); err != nil {
		return "", err
	}
	return "off", nil
}

func (d *dimmer) IdleState() string {
	if d.level == 0 {
		return "off"
	}
	return "on " + actuator.Num(d.level)
}

func (d *dimmer) Tools() []tools.Tool {
	spec := d.Spec("set", fmt.Sprintf("Dim the %s lamp: brightness from 0 (off) to 1 (full).", d.Name()),
		`{"type":"object","properties":{"level":{"type":"number","minimum":0,"maximum":1}},"required":["level"],"additionalProperties":false}`, "")
	// The hint: Home Assistant shows it as a number entity from 0 to 1.
	spec.Entity = &tools.Entity{Platform: "number", Name: d.Name(), Param: "level", Min: 0, Max: 1, Step: 0.05}
	return []tools.Tool{tools.Typed(spec, func(ctx context.Context, p struct {
		Level float64 `json:"level"`
	}) (tools.Result, error) {
		c := actuator.Command{Tool: spec.Name, Params: actuator.Marshal(p), Safe: p.Level == 0}
		return d.Do(ctx, c, func() (actuator.Outcome, error) {
			duty, err := d.writeLocked(p.Level)
			if err != nil {
				return actuator.Outcome{}, err
			}
			return actuator.Outcome{Applied: map[string]any{"level": p.Level, "duty": duty}}, nil
		})
	})}
}
