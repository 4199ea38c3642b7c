package actuator

import (
	"sort"
	"time"
)

// platformConfig is what a platform needs to build its adaptor: the pins
// that carry PWM (servo pins need a 50 Hz period and their pulse range set
// on the adaptor, before the first write).
type platformConfig struct {
	model    string
	settings Settings
	pins     []PWMPin
	sim      []SimAttacher // hardware the sim platform simulates
	now      func() time.Time
}

// platform builds the gobot adaptor of one device.platform. Each lives in
// its own file (platform_raspi.go …), the only file importing that gobot
// platform package.
type platform struct {
	// check rejects what the platform cannot drive, without hardware.
	check func(platformConfig) error
	// open builds the adaptor (not yet connected).
	open func(platformConfig) (Adaptor, error)
}

var platforms = map[string]platform{}

func platformNames() []string {
	out := make([]string, 0, len(platforms))
	for n := range platforms {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
