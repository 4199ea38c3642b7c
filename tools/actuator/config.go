package actuator

import (
	"fmt"
	"time"
)

// Config is one actuator block as a kind sees it. The actuators plugin
// translates the board file's block into it (this package does not read
// board files), defaults filled by the board where the kind declared them.
// The yaml tags are the board file's keys, so tests and tools can write
// blocks the way a board file does.
type Config struct {
	Name string `yaml:"name"` // [a-z][a-z0-9_]*; prefixes its tools
	Kind string `yaml:"kind"` // registry key
	// Pins by the roles the kind declares (Kind.Pins).
	Pins map[string]string `yaml:"pins"`
	// Bus, Address and Channel place a kind that sits on I2C (Kind.I2C).
	Bus     string `yaml:"bus"`
	Address uint16 `yaml:"address"`
	Channel int    `yaml:"channel"`
	// Scenarios tag the tools for the decision engine.
	Scenarios  []string `yaml:"scenarios"`
	Permission string   `yaml:"permission"` // needed to call its tools; "" is "actuate"
	Limits     Limits   `yaml:"limits"`
	// Initial is the state set at start, in the kind's words ("on", "90").
	Initial string `yaml:"initial"`
	// Decode strictly decodes the block's kind-specific `options` into v (a
	// pointer to the kind's options struct holding its defaults); errors
	// name file:line:col and the key. Nil decodes nothing.
	Decode func(v any) error `yaml:"-"`
	// BadOptionAt turns a problem with one option into an error at the
	// option's file:line:col (the actuators plugin sets it from the board);
	// nil gives the error without a position.
	BadOptionAt func(key, msg string) error `yaml:"-"`
}

// BadOption reports a value of option key that the kind rejects after
// decoding it, at its position in the board file when known.
func (c Config) BadOption(key, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c.BadOptionAt != nil {
		return c.BadOptionAt(key, msg)
	}
	return fmt.Errorf("options.%s: %s", key, msg)
}

// DecodeOptions calls c.Decode when set.
func (c Config) DecodeOptions(v any) error {
	if c.Decode == nil {
		return nil
	}
	return c.Decode(v)
}

// Limits is the safety envelope of one actuator, enforced below every
// caller. A kind declares which limits it enforces (Kind.Limits) and their
// defaults (Kind.Defaults); nil means "not set".
type Limits struct {
	MinAngle *float64 `yaml:"min_angle"` // degrees
	MaxAngle *float64 `yaml:"max_angle"`
	MaxRate  *float64 `yaml:"max_rate"`  // degrees per second
	MaxSpeed *float64 `yaml:"max_speed"` // 0..1
	// Deadman stops an output whose command is not refreshed within it; 0 off.
	Deadman time.Duration `yaml:"deadman"`
	MinDuty *float64      `yaml:"min_duty"` // 0..1
	MaxDuty *float64      `yaml:"max_duty"`
	// RateLimit caps commands per second; 0: no cap.
	RateLimit float64 `yaml:"rate_limit"`
	// OnViolation is "refuse" (also when empty) or "clamp".
	OnViolation string `yaml:"on_violation"`
}

// Clamp reports whether values outside the envelope are clamped rather
// than refused.
func (l Limits) Clamp() bool { return l.OnViolation == "clamp" }
