package board

import (
	"sync"
)

// ActuatorKind is what the board checks of one actuator kind: which pins it
// takes, whether it sits on an I2C bus and what `initial` may look like. The board does not know the kinds (they register
// themselves with the actuator package, like sensor kinds); the package
// that knows them hands them over with UseActuatorKinds, so a mistake in an
// actuator block is still reported at load time with file:line:col.
type ActuatorKind struct {
	// Pins are the pin roles the kind needs, all required; empty: it takes
	// no pins.
	Pins []string
	// I2C: the kind is a device on an I2C bus, so bus, address and channel
	// apply. Address is its default address; Channels is how many outputs
	// one chip has (several blocks may share a chip, one channel each; 0:
	// one device per address), and Chip names the chip in messages.
	I2C      bool
	Address  Addr
	Channels int
	Chip     string
	// Initial checks the form of `initial` (not empty) and returns the
	// problem, or "". The limits are the kind's: it checks them, and
	// `initial` against them, when it builds the actuator.
	Initial func(initial string) string
}

// ActuatorKinds is the set of actuator kinds a board may use.
type ActuatorKinds interface {
	Lookup(kind string) (ActuatorKind, bool)
	Names() []string // sorted, for messages
}

var (
	kindsMu       sync.RWMutex
	actuatorKinds ActuatorKinds
)

// UseActuatorKinds makes Parse check actuator blocks against the kinds and
// fill their defaults. Without it Parse checks only what every actuator
// block shares (name, pins on the header, scenarios, limit ranges), the
// way it treats sensor kinds.
func UseActuatorKinds(k ActuatorKinds) {
	kindsMu.Lock()
	defer kindsMu.Unlock()
	actuatorKinds = k
}

func currentActuatorKinds() ActuatorKinds {
	kindsMu.RLock()
	defer kindsMu.RUnlock()
	return actuatorKinds
}
