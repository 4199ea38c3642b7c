package ads1x15_test

import (
	"math"
	"testing"
	"time"

	_ "github.com/edgeagent/edgeagent/sensors/i2c/ads1x15"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

func TestChannelsScaledOnSimBoard(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: power
  kind: ads1115
  bus: "41"
  address: 0x49
  interval: 20ms
  options:
    data_rate: 860
    channels:
      - {name: battery, input: "0", range: 4.096, scale: 3.128, unit: V}
      - {name: pot, input: "1", range: 4.096, scale: 30.303, unit: "%"}
      - {name: shunt, input: "2-3", range: 0.256, scale: 10, offset: -0.01, unit: A}
    sim:
      inputs: {"0": {base: 3.9}, "1": {base: 1.65}, "2": {base: 0.1}, "3": {base: 0.05}}
`)
	rec.WaitFor(t, 3*time.Second, "readings", func() bool { return len(rec.Values("power.shunt")) >= 2 })
	for src, w := range map[string]struct{ v, tol float64 }{
		"power.battery": {3.9 * 3.128, 3.128 * (0.0015*3.9 + 3*4.096/32768)},
		"power.pot":     {1.65 * 30.303, 30.303 * (0.0015*1.65 + 3*4.096/32768)},
		"power.shunt":   {0.05*10 - 0.01, 10 * (0.0015*0.05 + 3*0.256/32768)},
	} {
		for _, v := range rec.Values(src) {
			if math.Abs(v-w.v) > w.tol {
				t.Errorf("%s = %v, want %v ± %v", src, v, w.v, w.tol)
			}
		}
	}
	if o := rec.Observations("power.pot")[0]; o.Unit != "%" {
		t.Errorf("unit %q", o.Unit)
	}
}

func TestADS1015DefaultChannel(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: adc
  kind: ads1015
  bus: "42"
  interval: 10ms
  options: {sim: {inputs: {"0": {base: 2.5}}}}
`)
	rec.WaitFor(t, 3*time.Second, "ain0", func() bool { return len(rec.Values("adc.ain0")) >= 1 })
	// 12 bits on ±4.096 V: 2 mV per count.
	if v := rec.Values("adc.ain0")[0]; math.Abs(v-2.5) > 0.0015*2.5+3*0.002 {
		t.Errorf("ain0 = %v", v)
	}
}

func TestOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: a, kind: ads1115, options: {channels: [{name: x, input: "4", range: 4.096}]}}`, "channels[0].input: not one of"},
		{`- {name: a, kind: ads1115, options: {channels: [{name: x, input: "0", range: 5}]}}`, "channels[0].range: not one of"},
		{`- {name: a, kind: ads1115, options: {channels: [{name: x, input: "0", range: 4.096}, {name: x, input: "1", range: 4.096}]}}`, "channels[1].name: used twice"},
		{`- {name: a, kind: ads1115, options: {data_rate: 1000}}`, "options.data_rate: must be in 1..860"},
		{`- {name: a, kind: ads1115, address: 0x50}`, "0x48-0x4b"},
		{`- {name: a, kind: ads1115, options: {sim: {inputs: {"7": {base: 1}}}}}`, "options.sim.inputs: a key is not an input"},
	})
}
