package i2ckit

import (
	"fmt"
	"slices"

	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
)

// CheckSim validates a kind's simulated device: each curve, named by its
// key under options.sim, and the scheduled faults. It returns every
// problem, curves in key order, for the kind to join with its own.
func CheckSim(curves map[string]i2csim.Curve, faults []i2csim.FaultWindow) []error {
	var errs []error
	keys := make([]string, 0, len(curves))
	for k := range curves {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if err := curves[k].Validate(); err != nil {
			errs = append(errs, fmt.Errorf("options.sim.%s: %w", k, err))
		}
	}
	if err := i2csim.ValidateFaults(faults); err != nil {
		errs = append(errs, fmt.Errorf("options.sim.%w", err))
	}
	return errs
}
