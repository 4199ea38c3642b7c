package actuator

import "fmt"

// Config is one actuator block as a kind sees it. The actuators plugin
// translates the board file's block into it (this package does not read
// board files); the kind decodes its options and its limits itself.
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
	// DecodeLimits and BadLimitAt are Decode and BadOptionAt for the
	// block's `limits:`, which the kind decodes into its own limits struct
	// (Base.DecodeLimits).
	DecodeLimits func(v any) error           `yaml:"-"`
	BadLimitAt   func(key, msg string) error `yaml:"-"`
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

// BadLimit reports a value of limit key that the kind rejects after
// decoding it, at its position in the board file when known.
func (c Config) BadLimit(key, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c.BadLimitAt != nil {
		return c.BadLimitAt(key, msg)
	}
	return fmt.Errorf("limits.%s: %s", key, msg)
}

// Envelope is what the limits of every kind share; the rest of a block's
// `limits:` (min_angle, max_speed …) belongs to its kind, which declares
// those keys in its own struct and enforces them.
type Envelope struct {
	// RateLimit caps commands per second; 0: no cap.
	RateLimit float64 `yaml:"rate_limit,omitempty"`
	// OnViolation is what happens to a value outside the kind's limits:
	// "refuse" (the default) or "clamp". Either way the reply says so.
	OnViolation string `yaml:"on_violation,omitempty"`
}

// Clamp reports whether values outside the envelope are clamped rather
// than refused.
func (e Envelope) Clamp() bool { return e.OnViolation == "clamp" }

func (e *Envelope) shared() *Envelope { return e }

// Limits is a kind's limits struct: its own keys, with their defaults, and
// the shared ones by embedding Envelope with `yaml:",inline"`, e.g.
//
//	type limits struct {
//		actuator.Envelope `yaml:",inline"`
//		MaxDuty float64 `yaml:"max_duty"`
//	}
type Limits interface{ shared() *Envelope }
