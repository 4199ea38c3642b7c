package actuator

import (
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
)

// The sim platform: every pin name is valid, and the actuators that need
// more than pins (a PCA9685 on the simulated I2C bus) attach their simulated
// hardware — the simulated robot has what its board file declares.
var (
	_ Adaptor   = (*simadaptor.Adaptor)(nil)
	_ I2COpener = (*simadaptor.Adaptor)(nil)
)

func init() {
	platforms["sim"] = platform{
		check: func(platformConfig) error { return nil },
		open: func(pc platformConfig) (Adaptor, error) {
			// The write log is for tests that inspect a board's writes;
			// a sim board run for hours keeps the last 1,024 (72 KB), full
			// within minutes, not 4,096 filling for an hour (the soak's
			// slope).
			a := simadaptor.New(simadaptor.Options{Now: pc.now, Keep: 1024})
			for _, s := range pc.sim {
				s.AttachSim(a)
			}
			return a, nil
		},
	}
}
