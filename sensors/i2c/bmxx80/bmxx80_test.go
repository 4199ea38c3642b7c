package bmxx80_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/sensors"
	_ "github.com/edgeagent/edgeagent/sensors/i2c/bmxx80"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func TestBME280OnSimBoard(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: env
  kind: bme280
  bus: "21"
  address: 0x77
  interval: 20ms
  options:
    sim:
      temperature: {base: 23.5}
      pressure: {base: 1002.5}
      humidity: {base: 61}
`)
	rec.WaitFor(t, 3*time.Second, "3 humidity readings", func() bool { return len(rec.Values("env.humidity")) >= 3 })
	for src, want := range map[string]struct {
		v, tol float64
		unit   string
	}{
		"env.temperature": {23.5, 0.05, "°C"},
		"env.pressure":    {1002.5, 0.1, "hPa"},
		"env.humidity":    {61, 0.5, "%RH"},
	} {
		for _, o := range rec.Observations(src) {
			if o.Kind != worldmodel.Reading || o.Unit != want.unit || math.Abs(o.Value-want.v) > want.tol || o.Time.IsZero() {
				t.Errorf("%s: %+v, want %.2f %s", src, o, want.v, want.unit)
			}
		}
	}
	if h := rec.Observations("env.health"); len(h) != 1 || h[0].Text != "ok" {
		t.Errorf("health %+v", h)
	}
	if len(rec.Events()) != 0 {
		t.Errorf("events on a healthy sensor: %s", rec.EventKinds())
	}
}

func TestBMP280HasNoHumidity(t *testing.T) {
	rec := sensortest.RunSim(t, `
- {name: baro, kind: bmp280, bus: "22", address: 0x76, interval: 20ms}
`)
	rec.WaitFor(t, 3*time.Second, "pressure", func() bool { return len(rec.Values("baro.pressure")) >= 2 })
	if got := strings.Join(rec.Sources(), " "); got != "baro.health baro.pressure baro.temperature" {
		t.Fatalf("sources %s", got)
	}
	// The default simulated room.
	if v := rec.Values("baro.pressure")[0]; math.Abs(v-1013.25) > 0.5 {
		t.Errorf("pressure %.2f", v)
	}
}

// A device that vanishes marks the sensor degraded with one sensor_fault
// event, is retried with backoff, and recovers by itself when it comes
// back power-cycled: the kind must re-initialise it, or humidity would be
// read from a skipped measurement.
func TestFaultCycle(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: env
  kind: bme280
  bus: "23"
  interval: 10ms
  options:
    retry: {initial: 20ms, max: 80ms}
    sim: {humidity: {base: 40}, temperature: {base: 20}, pressure: {base: 1000}}
`)
	rec.WaitFor(t, 3*time.Second, "first reading", func() bool { return len(rec.Values("env.humidity")) > 0 })

	bus := i2csim.Shared("23")
	bus.SetFault(0x76, i2csim.Vanish)
	rec.WaitFor(t, 3*time.Second, "sensor_fault", func() bool { return len(rec.Events(sensors.EventFault)) > 0 })
	// Several retries while it is gone, but a single fault event.
	rec.WaitFor(t, 3*time.Second, "retries", func() bool { return len(rec.Observations("env.health")) >= 4 })
	if n := len(rec.Events(sensors.EventFault)); n != 1 {
		t.Fatalf("%d fault events", n)
	}
	e := rec.Events(sensors.EventFault)[0]
	if e.Source != "env" || e.Priority != worldmodel.Normal || !strings.Contains(e.Message, "NACK") {
		t.Errorf("fault event %+v", e)
	}
	hs := rec.Observations("env.health")
	if !strings.HasPrefix(hs[len(hs)-1].Text, "degraded: ") || !strings.Contains(hs[len(hs)-1].Text, "retry in") {
		t.Errorf("health text %q", hs[len(hs)-1].Text)
	}
	before := len(rec.Values("env.humidity"))

	bus.SetFault(0x76, i2csim.NoFault)
	rec.WaitFor(t, 3*time.Second, "sensor_recovered", func() bool { return len(rec.Events(sensors.EventRecovered)) > 0 })
	rec.WaitFor(t, 3*time.Second, "readings after recovery", func() bool { return len(rec.Values("env.humidity")) >= before+3 })
	for _, v := range rec.Values("env.humidity")[before:] {
		if math.Abs(v-40) > 0.5 {
			t.Fatalf("humidity after recovery %.2f: driver not re-initialised", v)
		}
	}
	if got := rec.EventKinds(); got != "sensor_fault,sensor_recovered" {
		t.Errorf("events %s", got)
	}
	if hs := rec.Observations("env.health"); hs[len(hs)-1].Text != "ok" {
		t.Errorf("final health %q", hs[len(hs)-1].Text)
	}
}

// Faults scheduled in the sim block exercise the same path on the sim
// board without any test code.
func TestScheduledFaultFromConfig(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: env
  kind: bme280
  bus: "24"
  interval: 10ms
  options:
    retry: {initial: 10ms, max: 20ms}
    sim:
      faults: [{mode: nack, after: 100ms, for: 150ms}]
`)
	rec.WaitFor(t, 3*time.Second, "fault and recovery", func() bool { return len(rec.Events(sensors.EventRecovered)) > 0 })
	if got := rec.EventKinds(); got != "sensor_fault,sensor_recovered" {
		t.Errorf("events %s", got)
	}
}

func TestThresholdOnSimCurve(t *testing.T) {
	block := `
- name: env
  kind: bme280
  bus: "25"
  interval: 10ms
  thresholds:
    - {quantity: temperature, above: 30, hysteresis: 2, priority: high, event: overheat}
  options:
    # 25 °C, warming to 35 °C over 300 ms, then back down.
    sim: {temperature: {points: [{at: 0s, value: 25}, {at: 300ms, value: 35}, {at: 600ms, value: 25}]}}
`
	cfg := sensortest.Board(t, "sim", block)
	rec := sensortest.NewRecorder()
	sensortest.Start(t, cfg, sensors.WithThresholds(cfg.Name, sensortest.Thresholds(t, "sim", block), rec))
	rec.WaitFor(t, 3*time.Second, "alarm and clear", func() bool { return len(rec.Events("overheat_cleared")) > 0 })
	ev := rec.Events("overheat")
	if len(ev) != 1 || ev[0].Priority != worldmodel.High || ev[0].Data["value"].(float64) <= 30 {
		t.Fatalf("overheat events %+v", ev)
	}
	if c := rec.Events("overheat_cleared")[0]; c.Data["value"].(float64) > 28 {
		t.Fatalf("cleared at %v, above the hysteresis band", c.Data["value"])
	}
}

func TestOptionErrors(t *testing.T) {
	cases := []sensortest.Refusal{
		{`- {name: e, kind: bme280, options: {oversampling: {pressure: 3}}}`, "options.oversampling.pressure: not one of"},
		{`- {name: e, kind: bme280, options: {oversampling: {temperature: 0}}}`, "temperature: must be at least 1"},
		{`- {name: e, kind: bme280, options: {filter: 5}}`, "options.filter: not one of"},
		{`- {name: e, kind: bme280, address: 0x40}`, "0x76 or 0x77 only"},
		{`- {name: e, kind: bme280, options: {oversampeling: {}}}`, "test.yaml:5:39: sensors[0].options.oversampeling: unknown key"},
		{`- {name: e, kind: bme280, options: {sim: {temperature: {amplitude: 1}}}}`, "options.sim.temperature: curve: amplitude needs a period"},
		{`- {name: e, kind: bme280, options: {sim: {faults: [{mode: melt, for: 1s}]}}}`, "options.sim.faults[0].mode: unknown fault"},
	}
	for i, err := range sensortest.Refused(t, "sim", cases) {
		var be *board.Error
		if strings.HasPrefix(cases[i][1], "test.yaml") && !errors.As(err, &be) {
			t.Errorf("unknown option key not reported by the board decoder: %v", err)
		}
	}
}
