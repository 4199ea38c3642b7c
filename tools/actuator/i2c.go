package actuator

import (
	"fmt"
	"strconv"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/host/v3/sysfs"
)

// SharedI2C returns the device that several actuators share under key (a
// PCA9685 at a bus and address drives one servo per channel), opening the
// I2C bus on first use and calling open once per key: a driver that resets
// the chip when it initialises it must not run once per actuator. It is
// called with the actuator's lock held and takes the Set's.
func (b *Base) SharedI2C(bus, key string, open func(i2c.Bus) (any, error)) (any, error) {
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if d, ok := s.shared[key]; ok {
		return d, nil
	}
	opener, ok := s.hw.(I2COpener)
	if !ok {
		return nil, fmt.Errorf("the %s adaptor cannot open I2C buses", s.o.Platform)
	}
	bc := s.buses[bus]
	if bc == nil {
		var err error
		if bc, err = opener.OpenI2C(bus); err != nil {
			return nil, fmt.Errorf("i2c bus %s: %w", bus, err)
		}
		s.buses[bus] = bc
	}
	d, err := open(bc)
	if err != nil {
		return nil, err
	}
	s.shared[key] = d
	return d, nil
}

// openSysfsI2C opens /dev/i2c-<bus> with periph's sysfs driver (pure Go,
// no host.Init needed for one bus).
func openSysfsI2C(bus string) (i2c.BusCloser, error) {
	n, err := strconv.Atoi(bus)
	if err != nil {
		return nil, fmt.Errorf("i2c bus %q: want a bus number (/dev/i2c-N)", bus)
	}
	b, err := sysfs.NewI2C(n)
	if err != nil {
		return nil, err
	}
	return b, nil
}
