// Package gpiokit is what the GPIO input kinds share: finding the Linux
// GPIO line behind a header pin of the board, and watching a digital input
// with edge detection and debounce, degrading and retrying like every
// other sensor when the line cannot be opened.
package gpiokit

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"github.com/edgeagent/edgeagent/sensors/periphhost"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpioreg"
	"periph.io/x/host/v3/gpioioctl"
)

// line is one way to find a header pin's GPIO line: by the line name the
// kernel gives it, or by its offset on the GPIO chip with this label
// (older kernels leave lines unnamed).
type line struct {
	name   string
	chip   string // label prefix of the gpiochip
	offset int
}

// Board config pins are physical header numbers ("11"), as gobot and the
// board package use them. Raspberry Pi 4 and 5: header pin -> BCM GPIO
// (the standard 40-pin pinout, identical on both); the kernel names the
// lines "GPIO<n>" on both pinctrl-bcm2711 (Pi 4) and pinctrl-rp1 (Pi 5).
var raspiBCM = map[string]int{
	"3": 2, "5": 3, "7": 4, "8": 14, "10": 15, "11": 17, "12": 18, "13": 27,
	"15": 22, "16": 23, "18": 24, "19": 10, "21": 9, "22": 25, "23": 11, "24": 8,
	"26": 7, "27": 0, "28": 1, "29": 5, "31": 6, "32": 12, "33": 13, "35": 19,
	"36": 16, "37": 26, "38": 20, "40": 21,
}

// Jetson Orin Nano / Orin NX developer kit header J12: line names and
// offsets on the tegra234-gpio chip, from NVIDIA's Jetson.GPIO pin table
// (JETSON_ORIN_NX_PIN_DEFS, used for both modules).
var orinLines = map[string]line{
	"7": {"PAC.06", "tegra234-gpio", 144}, "11": {"PR.04", "tegra234-gpio", 112},
	"12": {"PH.07", "tegra234-gpio", 50}, "13": {"PY.00", "tegra234-gpio", 122},
	"15": {"PN.01", "tegra234-gpio", 85}, "16": {"PY.04", "tegra234-gpio", 126},
	"18": {"PY.03", "tegra234-gpio", 125}, "19": {"PZ.05", "tegra234-gpio", 135},
	"21": {"PZ.04", "tegra234-gpio", 134}, "22": {"PY.01", "tegra234-gpio", 123},
	"23": {"PZ.03", "tegra234-gpio", 133}, "24": {"PZ.06", "tegra234-gpio", 136},
	"26": {"PZ.07", "tegra234-gpio", 137}, "29": {"PQ.05", "tegra234-gpio", 105},
	"31": {"PQ.06", "tegra234-gpio", 106}, "32": {"PG.06", "tegra234-gpio", 41},
	"33": {"PH.00", "tegra234-gpio", 43}, "35": {"PI.02", "tegra234-gpio", 53},
	"36": {"PR.05", "tegra234-gpio", 113}, "37": {"PY.02", "tegra234-gpio", 124},
	"38": {"PI.01", "tegra234-gpio", 52}, "40": {"PI.00", "tegra234-gpio", 51},
}

// Jetson Nano (tegra210) header J41: gobot's jetson pinmap gives the
// global GPIO numbers; on tegra210 that is port·8+bit on the tegra-gpio
// chip, named P<port>.<bit> (216 = PBB.00).
var nanoGPIO = map[string]int{
	"7": 216, "11": 50, "12": 79, "13": 14, "15": 194, "16": 232, "18": 15,
	"19": 16, "21": 17, "22": 13, "23": 18, "24": 19, "26": 20, "29": 149,
	"31": 200, "32": 168, "33": 38, "35": 76, "36": 51, "37": 12, "38": 77, "40": 78,
}

func tegra210Name(n int) string {
	port, bit := n/8, n%8
	var p string
	if port < 26 {
		p = string(rune('A' + port))
	} else {
		c := string(rune('A' + port - 26))
		p = c + c
	}
	return fmt.Sprintf("P%s.%02d", p, bit)
}

// candidates lists the lines a header pin may be, in the order to try.
func candidates(platform, pin string) ([]line, error) {
	switch platform {
	case "raspi":
		n, ok := raspiBCM[pin]
		if !ok {
			return nil, errors.New("not a GPIO pin of the Raspberry Pi header")
		}
		return []line{{name: "GPIO" + strconv.Itoa(n), chip: "pinctrl-", offset: n}}, nil
	case "jetson":
		var out []line
		if l, ok := orinLines[pin]; ok {
			out = append(out, l)
		}
		if n, ok := nanoGPIO[pin]; ok {
			out = append(out, line{name: tegra210Name(n), chip: "tegra-gpio", offset: n})
		}
		if len(out) == 0 {
			return nil, errors.New("not a GPIO pin of the Jetson header")
		}
		return out, nil
	}
	return nil, errors.New("the platform has no GPIO header")
}

// OpenPin returns the line wired to the sensor's pin of this role: a
// simulated line on platform sim, otherwise the host's line found through
// periph (registered names first, then chip label and offset).
func OpenPin(cfg sensors.Config, role string) (gpio.PinIO, error) {
	pin, ok := cfg.Pins[role]
	if !ok || pin == "" {
		return nil, sensors.Permanent(fmt.Errorf("pins.%s: required", role))
	}
	if cfg.Platform == "sim" {
		return gpiosim.Shared(pin), nil
	}
	cands, err := candidates(cfg.Platform, pin)
	if err != nil {
		return nil, sensors.Permanent(fmt.Errorf("pins.%s: %w", role, err))
	}
	if err := periphhost.Init(); err != nil {
		return nil, err
	}
	var tried []string
	for _, c := range cands {
		if p := gpioreg.ByName(c.name); p != nil {
			return p, nil
		}
		tried = append(tried, c.name)
		for _, chip := range gpioioctl.Chips {
			if strings.HasPrefix(chip.Label(), c.chip) {
				if l := chip.ByNumber(c.offset); l != nil {
					return l, nil
				}
			}
		}
		tried = append(tried, fmt.Sprintf("%s*:%d", c.chip, c.offset))
	}
	return nil, fmt.Errorf("pins.%s: no GPIO line found (tried %s); is /dev/gpiochip* readable by this user?", role, strings.Join(tried, ", "))
}

// ParsePull converts the pull option: up, down or none.
func ParsePull(s string) (gpio.Pull, error) {
	switch s {
	case "up":
		return gpio.PullUp, nil
	case "down":
		return gpio.PullDown, nil
	case "none", "off":
		return gpio.Float, nil
	}
	return 0, errors.New("pull: not up, down or none")
}
