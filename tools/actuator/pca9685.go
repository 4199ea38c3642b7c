package actuator

import (
	"fmt"
	"math"
	"time"

	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/pca9685"
)

// pcaChip is one PCA9685, shared by the servos on its channels: periph's
// driver resets every channel when it initialises the chip, so it must be
// initialised once, not once per servo.
type pcaChip struct {
	dev    *pca9685.Dev
	period time.Duration // the real period the prescaler gives, not the nominal one
}

// pca9685 returns the chip at bus/addr, opening the bus and initialising
// the chip on first use. Called with an actuator's lock held; takes s.mu.
func (s *Set) pca9685(bus string, addr uint16, freq float64) (*pcaChip, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := fmt.Sprintf("%s/%#02x", bus, addr)
	if c := s.chips[key]; c != nil {
		return c, nil
	}
	opener, ok := s.hw.(I2COpener)
	if !ok {
		return nil, fmt.Errorf("the %s adaptor cannot open I2C buses", s.o.Platform)
	}
	b := s.buses[bus]
	if b == nil {
		var err error
		if b, err = opener.OpenI2C(bus); err != nil {
			return nil, fmt.Errorf("i2c bus %s: %w", bus, err)
		}
		s.buses[bus] = b
	}
	dev, err := pca9685.NewI2C(b, addr)
	if err != nil {
		return nil, fmt.Errorf("PCA9685 at %s: %w", key, err)
	}
	f := physic.Frequency(math.Round(freq)) * physic.Hertz
	if err := dev.SetPwmFreq(f); err != nil {
		return nil, fmt.Errorf("PCA9685 at %s: set frequency: %w", key, err)
	}
	c := &pcaChip{dev: dev, period: pcaPeriod(f)}
	s.chips[key] = c
	return c, nil
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
