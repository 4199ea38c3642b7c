package board

import (
	"slices"
	"strconv"
)

// header is the 40-pin header of one board model as the drivers see it:
// gobot's raspi and jetson adaptors address GPIO by physical header pin
// number written as a string ("11"), and Linux exposes the header's I2C
// pins as /dev/i2c-<bus>, which periph's i2creg opens by that number.
// Power and ground pins are absent on purpose: a block that names one is a
// wiring mistake.
type header struct {
	platform   string
	gpio       []string             // header pins usable as GPIO, ascending
	i2c        map[string][2]string // bus number -> {SDA, SCL} header pins
	defaultBus string               // the bus a sensor without `bus:` uses
	busNotes   map[string]string    // why a bus is special, for error messages
}

// Raspberry Pi 4 and 5 (40-pin header, identical pinout).
//
// GPIO pins: gobot v2.6.0 platforms/raspi/pinmap.go, the entries valid for
// board revision 3 (every Pi with a 40-pin header). Pins 27/28 (GPIO0/1,
// ID_SD/ID_SC) are not in gobot's map: they carry the HAT ID EEPROM bus.
// I2C: pins 3/5 are GPIO2/3 = I2C1 (/dev/i2c-1, enabled by
// dtparam=i2c_arm=on); pins 27/28 are I2C0 (/dev/i2c-0), reserved for HAT
// EEPROMs and only present with dtparam=i2c_vc=on. Source: the
// Raspberry Pi hardware documentation (GPIO and the 40-pin header) and
// /boot/firmware/overlays/README.
var raspiHeader = header{
	platform:   "raspi",
	gpio:       []string{"3", "5", "7", "8", "10", "11", "12", "13", "15", "16", "18", "19", "21", "22", "23", "24", "26", "29", "31", "32", "33", "35", "36", "37", "38", "40"},
	i2c:        map[string][2]string{"1": {"3", "5"}, "0": {"27", "28"}},
	defaultBus: "1",
	busNotes:   map[string]string{"0": "bus 0 is the HAT ID EEPROM bus; it needs dtparam=i2c_vc=on"},
}

// headers maps device.model to its header table.
var headers = map[string]header{
	"rpi4": raspiHeader,
	"rpi5": raspiHeader,

	// Jetson Orin Nano developer kit (carrier P3768), header J12.
	//
	// GPIO pins: gobot v2.6.0 platforms/jetson/pinmap.go (written for the
	// Jetson Nano, whose header has the same GPIO positions); they agree
	// with NVIDIA's Jetson.GPIO pin table for JETSON_ORIN_NANO. Pins 8/10
	// are UART1 and 3/5, 27/28 are I2C: gobot's map leaves them out.
	// I2C: pins 3/5 are I2C1 of the header = /dev/i2c-7, pins 27/28 are
	// I2C0 of the header = /dev/i2c-1 (NVIDIA developer kit pinout;
	// JetsonHacks' "Jetson Orin Nano GPIO header pinout"). Note that gobot's
	// jetson adaptor only accepts I2C bus numbers 0 and 1, so bus 7 must be
	// opened through periph (sensors/i2c does).
	"jetson-orin-nano": {
		platform:   "jetson",
		gpio:       []string{"7", "11", "12", "13", "15", "16", "18", "19", "21", "22", "23", "24", "26", "29", "31", "32", "33", "35", "36", "37", "38", "40"},
		i2c:        map[string][2]string{"7": {"3", "5"}, "1": {"27", "28"}},
		defaultBus: "7",
	},

	// Jetson Nano developer kit (P3450), header J41: what gobot's jetson
	// adaptor was written for. Same GPIO pins as above (gobot pinmap.go);
	// pins 3/5 are /dev/i2c-1 and pins 27/28 are /dev/i2c-0.
	"jetson-nano": {
		platform:   "jetson",
		gpio:       []string{"7", "11", "12", "13", "15", "16", "18", "19", "21", "22", "23", "24", "26", "29", "31", "32", "33", "35", "36", "37", "38", "40"},
		i2c:        map[string][2]string{"1": {"3", "5"}, "0": {"27", "28"}},
		defaultBus: "1",
	},
}

// simBus is the bus name of the simulated I2C bus (sensors/i2c's fake).
const simBus = "sim"

// modelsOf lists the known models of a platform, sorted.
func modelsOf(platform string) []string {
	var out []string
	for m, h := range headers {
		if h.platform == platform {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out
}

// busNames lists a header's I2C buses in numeric order.
func (h header) busNames() []string {
	var out []string
	for b := range h.i2c {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return x - y
	})
	return out
}

// i2cPin says which bus and line a header pin belongs to, if any.
func (h header) i2cPin(pin string) (bus, line string, ok bool) {
	for b, p := range h.i2c {
		switch pin {
		case p[0]:
			return b, "SDA", true
		case p[1]:
			return b, "SCL", true
		}
	}
	return "", "", false
}
