package scd4x_test

import (
	"math"
	"testing"
	"time"

	_ "github.com/edgeagent/edgeagent/sensors/i2c/scd4x"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

func TestCO2OnSimBoard(t *testing.T) {
	t.Parallel()
	cfg := sensortest.Board(t, "sim", `
- name: air
  kind: scd4x
  bus: "81"
  options:
    sim:
      measurement_interval: 100ms
      co2: {base: 1234}
      temperature: {base: 21.7}
      humidity: {base: 52.5}
`)
	rec := sensortest.NewRecorder()
	stop := sensortest.Start(t, cfg, rec)
	rec.WaitFor(t, 5*time.Second, "3 measurements", func() bool { return len(rec.Values("air.co2")) >= 3 })
	start := time.Now()
	stop() // Halt waits 500 ms for the sensor; still well within 2 s
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("stop took %s", d)
	}
	for src, w := range map[string]struct{ v, tol float64 }{
		"air.co2":         {1234, 0.5},
		"air.temperature": {21.7, 0.01},
		"air.humidity":    {52.5, 0.01},
	} {
		for _, v := range rec.Values(src) {
			if math.Abs(v-w.v) > w.tol {
				t.Errorf("%s = %v, want %v", src, v, w.v)
			}
		}
	}
	// One reading per measurement, not per poll.
	obs := rec.Observations("air.co2")
	for i := 1; i < len(obs); i++ {
		if gap := obs[i].Time.Sub(obs[i-1].Time); gap < 80*time.Millisecond {
			t.Errorf("readings %s apart: faster than the sensor measures", gap)
		}
	}
}

// Shutdown while a sample waits for the next 5 s measurement must not
// wait for it.
func TestStopWhileWaiting(t *testing.T) {
	t.Parallel()
	cfg := sensortest.Board(t, "sim", `
- {name: air, kind: scd4x, bus: "82"}
`)
	rec := sensortest.NewRecorder()
	stop := sensortest.Start(t, cfg, rec)
	time.Sleep(1200 * time.Millisecond) // started, first measurement not yet due
	start := time.Now()
	stop()
	if d := time.Since(start); d > 1500*time.Millisecond {
		t.Errorf("stop took %s", d)
	}
	if len(rec.Events()) != 0 {
		t.Errorf("events %s", rec.EventKinds())
	}
}

func TestOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: a, kind: scd4x, address: 0x61}`, "0x62 only"},
		{`- {name: a, kind: scd4x, options: {altitude: 100}}`, "options.altitude: unknown key"},
	})
}
