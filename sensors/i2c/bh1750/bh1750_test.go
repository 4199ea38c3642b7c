package bh1750_test

import (
	"math"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/bh1750"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestResolutions(t *testing.T) {
	t.Parallel()
	for i, c := range []struct {
		res string
		tol float64 // quantisation of the mode
	}{{"high", 1 / 1.2}, {"high2", 0.5 / 1.2}, {"low", 4 / 1.2}} {
		bus := []string{"61", "62", "63"}[i]
		cfg := sensortest.Board(t, "sim", `
- name: light
  kind: bh1750
  bus: "`+bus+`"
  interval: 150ms
  options: {resolution: `+c.res+`, sim: {illuminance: {base: 273.4}}}
`)
		rec := sensortest.NewRecorder()
		stop := sensortest.Start(t, cfg, rec)
		rec.WaitFor(t, 3*time.Second, "illuminance", func() bool { return len(rec.Values("light.illuminance")) >= 1 })
		stop()
		v := rec.Values("light.illuminance")[0]
		if math.Abs(v-273.4) > c.tol {
			t.Errorf("%s: %v lx, want 273.4 ± %.2f", c.res, v, c.tol)
		}
	}
}

// Dusk: the light falls below the "dark" threshold once, however noisy.
func TestDuskThreshold(t *testing.T) {
	t.Parallel()
	block := `
- name: light
  kind: bh1750
  bus: "64"
  interval: 150ms
  thresholds:
    - {quantity: illuminance, below: 50, hysteresis: 20, priority: normal, event: dark}
  options:
    sim:
      illuminance: {points: [{at: 0s, value: 400}, {at: 600ms, value: 5}], noise: 3}
`
	cfg := sensortest.Board(t, "sim", block)
	rec := sensortest.NewRecorder()
	sensortest.Start(t, cfg, sensors.WithThresholds("light", sensortest.Thresholds(t, "sim", block), rec))
	rec.WaitFor(t, 5*time.Second, "dark", func() bool { return len(rec.Events("dark")) == 1 })
	rec.WaitFor(t, 5*time.Second, "dark readings", func() bool {
		v := rec.Values("light.illuminance")
		return len(v) > 3 && v[len(v)-1] < 15 && v[len(v)-2] < 15
	})
	if got := rec.EventKinds(); got != "dark" {
		t.Errorf("events %s", got)
	}
	if e := rec.Events("dark")[0]; e.Priority != worldmodel.Normal {
		t.Errorf("priority %s", e.Priority)
	}
}

func TestOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: l, kind: bh1750, options: {resolution: ultra}}`, "options.resolution: not high, high2 or low"},
		{`- {name: l, kind: bh1750, address: 0x24}`, "0x23 or 0x5c"},
	})
}
