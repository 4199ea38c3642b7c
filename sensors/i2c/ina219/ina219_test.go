package ina219_test

import (
	"math"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/ina219"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

func TestSupplyOnSimBoard(t *testing.T) {
	// 14.8 V (a 4S pack) needs the 32 V range the kind selects by default.
	rec := sensortest.RunSim(t, `
- name: supply
  kind: ina219
  bus: "51"
  interval: 150ms
  options:
    shunt_ohms: 0.1
    max_current: 3.2
    sim: {bus_voltage: {base: 14.8}, current: {base: 1.75}}
`)
	rec.WaitFor(t, 3*time.Second, "readings", func() bool { return len(rec.Values("supply.power")) >= 2 })
	// Datasheet SBOS448: ±0.5 % gain, ±100 µV shunt offset.
	for src, w := range map[string]struct{ v, tol float64 }{
		"supply.voltage":       {14.8, 0.005*14.8 + 0.004},
		"supply.current":       {1.75, 0.005*1.75 + 0.001},
		"supply.power":         {14.8 * 1.75, 0.01 * 14.8 * 1.75},
		"supply.shunt_voltage": {0.175, 0.005*0.175 + 100e-6},
	} {
		vs := rec.Values(src)
		if len(vs) == 0 {
			t.Fatalf("no %s", src)
		}
		for _, v := range vs {
			if math.Abs(v-w.v) > w.tol {
				t.Errorf("%s = %v, want %v ± %v", src, v, w.v, w.tol)
			}
		}
	}
}

// After a power cycle the calibration register is 0 and the chip reports
// no current; the kind recreates the driver, which recalibrates.
func TestRecalibratesAfterPowerCycle(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: supply
  kind: ina219
  bus: "52"
  interval: 150ms
  options:
    retry: {initial: 10ms, max: 20ms}
    sim: {bus_voltage: {base: 12}, current: {base: 1}}
`)
	rec.WaitFor(t, 3*time.Second, "current", func() bool { return len(rec.Values("supply.current")) >= 1 })
	bus := i2csim.Shared("52")
	bus.SetFault(0x40, i2csim.Vanish)
	rec.WaitFor(t, 3*time.Second, "fault", func() bool { return len(rec.Events(sensors.EventFault)) == 1 })
	n := len(rec.Values("supply.current"))
	bus.SetFault(0x40, i2csim.NoFault)
	rec.WaitFor(t, 3*time.Second, "current after recovery", func() bool { return len(rec.Values("supply.current")) >= n+2 })
	for _, v := range rec.Values("supply.current")[n:] {
		if math.Abs(v-1) > 0.01 {
			t.Fatalf("current after power cycle %v", v)
		}
	}
}

func TestOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: s, kind: ina219, options: {shunt_ohms: 0}}`, "options.shunt_ohms: must be in (0, 10]"},
		{`- {name: s, kind: ina219, options: {max_current: 5}}`, "beyond the ±320 mV"},
		{`- {name: s, kind: ina219, options: {bus_range: 24}}`, "options.bus_range: must be 16 or 32"},
		{`- {name: s, kind: ina219, address: 0x30}`, "0x40-0x4f"},
	})
}
