package servo

import (
	"fmt"
	"math"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/pca9685"

	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
)

// pcaChip is one PCA9685, shared by the servos on its channels: periph's
// driver resets every channel when it initialises the chip, so it must be
// initialised once, not once per servo.
type pcaChip struct {
	dev    *pca9685.Dev
	period time.Duration // the real period the prescaler gives, not the nominal one
}

// pca9685 returns the servo's chip, initialising it on first use: periph's
// driver resets every channel when it initialises the chip, so the servos
// of one chip share it (Base.SharedI2C).
func (a *servoAct) pca9685() (*pcaChip, error) {
	cfg := a.Config()
	key := fmt.Sprintf("%s/%#02x", cfg.Bus, cfg.Address)
	d, err := a.SharedI2C(cfg.Bus, key, func(bus i2c.Bus) (any, error) {
		dev, err := pca9685.NewI2C(bus, cfg.Address)
		if err != nil {
			return nil, fmt.Errorf("PCA9685 at %s: %w", key, err)
		}
		f := physic.Frequency(math.Round(a.opts.Frequency)) * physic.Hertz
		if err := dev.SetPwmFreq(f); err != nil {
			return nil, fmt.Errorf("PCA9685 at %s: set frequency: %w", key, err)
		}
		return &pcaChip{dev: dev, period: pcaPeriod(f)}, nil
	})
	if err != nil {
		return nil, err
	}
	return d.(*pcaChip), nil
}

// AttachSim puts a simulated PCA9685 where the block says the chip is, so
// the sim board has the hardware its file declares.
func (a *servoAct) AttachSim(sim *simadaptor.Adaptor) {
	if cfg := a.Config(); cfg.Kind == pcaKind {
		sim.I2CBus(cfg.Bus).AttachPCA9685(cfg.Address)
	}
}

// pcaPeriod is the period the chip really runs at for a requested
// frequency: periph's driver computes the prescaler as
// round(25 MHz / 4096 / f) and the chip divides by prescaler+1.
func pcaPeriod(f physic.Frequency) time.Duration {
	prescale := (25*physic.MegaHertz/4096 + f/2) / f
	return time.Duration(float64(time.Second) * 4096 * float64(prescale+1) / 25e6)
}

// setPulse sets a channel's high time per period, in 4096ths of the period.
func (c *pcaChip) setPulse(ch int, pulse time.Duration) error {
	counts := int(math.Round(float64(pulse) / float64(c.period) * 4096))
	counts = min(max(counts, 0), 4095)
	return c.dev.SetPwm(ch, 0, gpio.Duty(counts))
}
