package actuator

import (
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
)

// The sim platform: every pin name is valid, and the simulated I2C buses
// carry a PCA9685 at every address a pca9685_servo names — the simulated
// robot has the hardware its board file declares.
var (
	_ Adaptor   = (*simadaptor.Adaptor)(nil)
	_ I2COpener = (*simadaptor.Adaptor)(nil)
)

func init() {
	platforms["sim"] = platform{
		check: func(platformConfig) error { return nil },
		open: func(pc platformConfig) (Adaptor, error) {
			a := simadaptor.New(simadaptor.Options{Now: pc.now})
			for _, c := range pc.chips {
				a.I2CBus(c.bus).AttachPCA9685(c.addr)
			}
			return a, nil
		},
	}
}
