package actuator

import (
	"errors"
	"fmt"

	"gobot.io/x/gobot/v2/platforms/adaptors"
	"gobot.io/x/gobot/v2/platforms/raspi"
	"periph.io/x/conn/v3/i2c"
)

// raspiPWM maps the header pins that can carry the Pi's two hardware PWM
// channels to gobot's sysfs PWM pin ids. The board file names header pins
// (like everything else); gobot's raspi adaptor wants "pwm0"/"pwm1" for the
// kernel's PWM (dtoverlay=pwm-2chan,pin=18,func=2,pin2=13,func2=4 gives
// pins 12 and 33).
var raspiPWM = map[string]string{"12": "pwm0", "32": "pwm0", "33": "pwm1", "35": "pwm1"}

var (
	_ Adaptor   = (*raspiAdaptor)(nil)
	_ I2COpener = (*raspiAdaptor)(nil)
)

func init() {
	platforms["raspi"] = platform{
		check: func(pc platformConfig) error { _, _, err := raspiOptions(pc); return err },
		open: func(pc platformConfig) (Adaptor, error) {
			opts, ids, err := raspiOptions(pc)
			if err != nil {
				return nil, err
			}
			return &raspiAdaptor{Adaptor: raspi.NewAdaptor(opts...), pwmIDs: ids}, nil
		},
	}
}

// raspiOptions translates the PWM pins of the board into gobot adaptor
// options: which pin id each header pin is, its period (50 Hz for servos)
// and each servo's pulse range.
func raspiOptions(pc platformConfig) ([]any, map[string]string, error) {
	var opts []any
	ids := map[string]string{}
	used := map[string]string{}
	blaster := pc.settings.PWM == "pi-blaster"
	if blaster {
		opts = append(opts, adaptors.WithPWMUsePiBlaster())
	}
	for _, p := range pc.pins {
		id := p.Pin
		if !blaster {
			var ok bool
			if id, ok = raspiPWM[p.Pin]; !ok {
				return nil, nil, errors.New("a PWM pin has no hardware PWM on a Raspberry Pi (pins 12/32 are pwm0, 33/35 are pwm1); use one of those, or plugins.actuators.pwm: pi-blaster")
			}
		}
		if _, dup := used[id]; dup {
			return nil, nil, fmt.Errorf("two actuators' PWM pins share channel %s", id)
		}
		used[id] = p.Actuator
		ids[p.Pin] = id
		switch {
		case blaster && p.Period > 0 && !p.Servo:
			return nil, nil, errors.New("options.frequency: pi-blaster runs every pin at the cycle it was compiled with (100 Hz)")
		case !blaster && p.Period > 0:
			opts = append(opts, adaptors.WithPWMDefaultPeriodForPin(id, uint32(p.Period.Nanoseconds())))
		}
		if p.Servo {
			opts = append(opts, adaptors.WithPWMServoDutyCycleRangeForPin(id, p.PulseMin, p.PulseMax))
		}
	}
	return opts, ids, nil
}

// raspiAdaptor is gobot's raspi adaptor addressed by header pin for PWM
// too, with I2C through the kernel's /dev/i2c-N (for PCA9685s).
type raspiAdaptor struct {
	*raspi.Adaptor
	pwmIDs map[string]string
}

func (r *raspiAdaptor) pwmID(pin string) string {
	if id, ok := r.pwmIDs[pin]; ok {
		return id
	}
	return pin
}

func (r *raspiAdaptor) PwmWrite(pin string, v byte) error {
	return r.Adaptor.PwmWrite(r.pwmID(pin), v)
}

func (r *raspiAdaptor) ServoWrite(pin string, v byte) error {
	return r.Adaptor.ServoWrite(r.pwmID(pin), v)
}

func (r *raspiAdaptor) OpenI2C(bus string) (i2c.BusCloser, error) { return openSysfsI2C(bus) }
