package actuator

import (
	"errors"
	"fmt"

	"gobot.io/x/gobot/v2/platforms/adaptors"
	"gobot.io/x/gobot/v2/platforms/jetson"
	"periph.io/x/conn/v3/i2c"
)

// jetsonPWM lists the header pins gobot's jetson adaptor drives with the
// kernel's PWM (platforms/jetson/pinmap.go, v2.6.0).
var jetsonPWM = map[string]bool{"32": true, "33": true}

var (
	_ Adaptor   = (*jetsonAdaptor)(nil)
	_ I2COpener = (*jetsonAdaptor)(nil)
)

func init() {
	platforms["jetson"] = platform{
		check: func(pc platformConfig) error { _, err := jetsonOptions(pc); return err },
		open: func(pc platformConfig) (Adaptor, error) {
			opts, err := jetsonOptions(pc)
			if err != nil {
				return nil, err
			}
			return &jetsonAdaptor{jetson.NewAdaptor(opts...)}, nil
		},
	}
}

func jetsonOptions(pc platformConfig) ([]any, error) {
	if pc.settings.PWM == "pi-blaster" {
		return nil, fmt.Errorf("plugins.actuators.pwm: pi-blaster is for Raspberry Pis")
	}
	var opts []any
	for _, p := range pc.pins {
		if !jetsonPWM[p.Pin] {
			return nil, errors.New("a PWM pin has no PWM on a Jetson header (gobot drives pins 32 and 33)")
		}
		if p.Period > 0 {
			opts = append(opts, adaptors.WithPWMDefaultPeriodForPin(p.Pin, uint32(p.Period.Nanoseconds())))
		}
		if p.Servo {
			opts = append(opts, adaptors.WithPWMServoDutyCycleRangeForPin(p.Pin, p.PulseMin, p.PulseMax))
		}
	}
	return opts, nil
}

// jetsonAdaptor adds I2C through the kernel's /dev/i2c-N: gobot's jetson
// adaptor accepts only buses 0 and 1, but the Orin Nano's header I2C is
// bus 7.
type jetsonAdaptor struct{ *jetson.Adaptor }

func (j *jetsonAdaptor) OpenI2C(bus string) (i2c.BusCloser, error) { return openSysfsI2C(bus) }
