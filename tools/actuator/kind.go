package actuator

import (
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/internal/registry"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
)

// Kind is one actuator kind. A kind lives in its own package, which
// registers it from init (like sensor kinds and database/sql drivers); the
// board file names kinds, and the Set builds one Actuator per block.
type Kind struct {
	// Pins are the pin roles a block must give (all required); empty: the
	// kind takes no pins.
	Pins []string
	// I2C: the kind is a device on an I2C bus (bus, address and channel
	// apply). Address is its default address; Channels is how many outputs
	// one chip has, each block using one (0: one device per address); Chip
	// names the chip in messages.
	I2C      bool
	Address  uint16
	Channels int
	Chip     string
	// Initial checks a block's `initial` (not empty) at load time, without
	// the limits (the kind's New checks it against them), and returns the
	// problem in words, or "".
	Initial func(initial string) string
	// StopRank orders the e-stop: lower ranks stop first (motors 0, power
	// outputs 1, switches 2, lights 3, servos that only end their ramps 4).
	StopRank int
	// New builds the actuator around b, whose Config is the block. It
	// decodes and checks the options, and the limits with Base.DecodeLimits
	// when the kind has limit keys of its own, but must not touch hardware
	// (OpenLocked does), so `edgeagent check` works anywhere.
	New func(b *Base) (Actuator, error)
}

// Actuator is one kind's implementation. It embeds *Base, which is what
// makes it an Actuator (the unexported method) and gives it the shared
// machinery: the lock, the gate, the envelope helpers, background tasks
// and the audit log. Methods named …Locked run with the Base's lock held.
type Actuator interface {
	base() *Base
	// Tools are the actuator's skills; their specs come from Base.Spec.
	Tools() []tools.Tool
	// PWMPins lists the pins driven with PWM or servo writes, so the
	// platform can set their period and pulse range before the first write.
	PWMPins() []PWMPin
	// OpenLocked builds the driver on the connected adaptor.
	OpenLocked() error
	// InitialLocked applies the block's `initial` state.
	InitialLocked() error
	// SafeLocked brings the output to its safe state (stopped, off,
	// holding); estop says whether an e-stop asked, for kinds whose options
	// let an output hold through one. It reports what it did.
	SafeLocked(estop bool) (string, error)
	// IdleState is the world-model state after a stop or reset.
	IdleState() string
}

// SimAttacher is implemented by actuators whose hardware the sim platform
// must simulate beyond pins (a PCA9685 on the simulated I2C bus).
type SimAttacher interface {
	AttachSim(a *simadaptor.Adaptor)
}

// PWMPin is a pin the platform must prepare for PWM.
type PWMPin struct {
	Actuator string
	Pin      string
	Period   time.Duration // 0: the platform default
	Servo    bool          // a servo signal: PulseMin/PulseMax map 0–180°
	PulseMin time.Duration
	PulseMax time.Duration
}

var kinds = registry.New[Kind](registry.ActuatorKind)

// Register makes an actuator kind available. It panics on a duplicate or
// incomplete kind: both are programming errors.
func Register(name string, k Kind) {
	if k.New == nil {
		panic("actuator kind " + name + " has no New")
	}
	kinds.Register(name, k)
}

// Lookup returns a registered kind.
func Lookup(name string) (Kind, bool) { return kinds.Lookup(name) }

// Kinds lists the registered kinds, sorted.
func Kinds() []string { return kinds.Names() }

// build makes one actuator of a registered kind, its defaults filled.
func build(s *Set, cfg Config) (Actuator, error) {
	k, ok := Lookup(cfg.Kind)
	if !ok {
		return nil, fmt.Errorf("kind %q: %s", cfg.Kind, kinds.Missing(cfg.Kind))
	}
	if k.I2C && cfg.Address == 0 {
		cfg.Address = k.Address
	}
	b := &Base{s: s, cfg: cfg, state: "unknown", rank: k.StopRank}
	a, err := k.New(b)
	if err != nil {
		return nil, err
	}
	if a.base() != b {
		return nil, fmt.Errorf("kind %s: New must return an actuator around the Base it was given", cfg.Kind)
	}
	if b.envelope == nil { // a kind with only the shared limits
		if err := b.DecodeLimits(&Envelope{}); err != nil {
			return nil, err
		}
	}
	b.self = a
	return a, nil
}
