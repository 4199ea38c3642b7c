package actuator

import (
	"fmt"
	"strconv"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/host/v3/sysfs"
)

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
