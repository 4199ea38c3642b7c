package board

// The hardware a board file claims: I2C buses and addresses, header pins.
// Each may be used once (a multi-channel chip once per channel), and a pin that is an
// I2C line of a bus in use is not a free GPIO.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// useBus records an I2C bus in use, checking it exists on the board.
func (v *validator) useBus(path, bus string) {
	switch {
	case v.c.Device.Platform == "sim":
		if bus != simBus && strings.Trim(bus, "0123456789") != "" {
			v.fail(path, "the sim platform has bus \"sim\" (or a number)")
			return
		}
	case v.hasHdr:
		if _, ok := v.hdr.i2c[bus]; !ok {
			var have []string
			for _, b := range v.hdr.busNames() {
				pins := v.hdr.i2c[b]
				have = append(have, fmt.Sprintf("%s (pins %s/%s)", b, pins[0], pins[1]))
			}
			v.fail(path, "not an I2C bus of this board's header; buses: %s", strings.Join(have, ", "))
			return
		}
	default:
		return // unknown model: reported on device.model
	}
	if _, ok := v.buses[bus]; !ok {
		v.buses[bus] = path
	}
}

// i2c checks an address and that no two devices share (bus, address).
// Outputs of one multi-channel chip (channel >= 0; chip names it, e.g. a
// PCA9685) may share an address as long as each has its own channel.
func (v *validator) i2c(p string, bus string, addr Addr, channel int, chip string) {
	if addr == 0 {
		return
	}
	ap := p + ".address"
	if addr < 0x03 || addr > 0x77 {
		v.fail(ap, "want 0x03–0x77 (7-bit addresses; the rest are reserved)")
		return
	}
	key := bus + "/" + addr.String()
	u, used := v.devices[key]
	switch {
	case !used:
		v.devices[key] = &i2cUse{path: ap, chip: chip, channels: map[int]string{channel: ap}}
	case channel < 0 || u.chip == "":
		v.fail(ap, "this bus and address are already used by %s (line %d)", parentPath(u.path), v.line(u.path))
	case u.channels[channel] != "":
		first := u.channels[channel]
		v.fail(p+".channel", "this channel of the %s is already used by %s (line %d)", u.chip, parentPath(first), v.line(first))
	default:
		u.channels[channel] = ap
	}
}

// i2cUse is one I2C address in use.
type i2cUse struct {
	path     string         // first user's address key
	chip     string         // a multi-channel chip: its channels may share it
	channels map[int]string // channel -> user's address key
}

// pinMap checks each pin exists on the header, is not an I2C line of a bus
// in use, and is not used twice anywhere on the board.
func (v *validator) pinMap(p string, pins map[string]string) {
	roles := make([]string, 0, len(pins))
	for r := range pins {
		roles = append(roles, r)
	}
	// Visit in file order so "first used by" names the earlier line.
	slices.SortFunc(roles, func(a, b string) int {
		return comparePos(v.at(joinKey(p+".pins", a)), v.at(joinKey(p+".pins", b)))
	})
	for _, r := range roles {
		pin := pins[r]
		path := joinKey(p+".pins", r)
		if !v.pinOK(path, pin) {
			continue
		}
		if first, dup := v.pins[pin]; dup {
			v.fail(path, "this pin is already used by %s (line %d)", first, v.line(first))
			continue
		}
		v.pins[pin] = path
	}
}

func (v *validator) pinOK(path, pin string) bool {
	switch {
	case pin == "":
		v.fail(path, "empty pin")
		return false
	case v.c.Device.Platform == "sim":
		return true
	case !v.hasHdr:
		return true // unknown model: reported on device.model
	}
	if bus, line, ok := v.hdr.i2cPin(pin); ok {
		if first, used := v.buses[bus]; used {
			v.fail(path, "this pin is the %s line of I2C bus %s (the header table), in use by %s (line %d); pick another GPIO pin", line, bus, parentPath(first), v.line(first))
			return false
		}
	}
	if !slices.Contains(v.hdr.gpio, pin) {
		hint := ""
		if _, err := strconv.Atoi(pin); err != nil {
			hint = " (pins are physical header numbers as gobot uses them, e.g. \"11\", not GPIO/BCM names)"
		}
		v.fail(path, "not a GPIO pin of this board's header%s; GPIO pins: %s", hint, strings.Join(v.hdr.gpio, ", "))
		return false
	}
	return true
}
