package i2csim

import (
	"sync"
	"time"
)

// chip is the state every simulated device shares: its lock, and the time
// it was first powered, from which its curves run (a power cycle resets
// the registers, not the environment the chip measures).
type chip struct {
	mu      sync.Mutex
	started time.Time
}

// powerOn notes the first power-on and runs reset (the registers' power-on
// values), under the lock.
func (c *chip) powerOn(now time.Time, reset func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started.IsZero() {
		c.started = now
	}
	reset()
}
