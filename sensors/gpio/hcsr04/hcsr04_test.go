package hcsr04_test

import (
	"context"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"github.com/edgeagent/edgeagent/sensors/gpio/hcsr04"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit/kittest"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/gpio"
)

func TestSpeedOfSound(t *testing.T) {
	// Textbook values: 331.3 m/s at 0 °C, 343.2 m/s at 20 °C.
	if c := hcsr04.SpeedOfSound(0); math.Abs(c-331.3) > 0.05 {
		t.Errorf("0 °C: %v", c)
	}
	if c := hcsr04.SpeedOfSound(20); math.Abs(c-343.2) > 0.1 {
		t.Errorf("20 °C: %v", c)
	}
}

func TestRangerAccuracy(t *testing.T) {
	for i, d := range []float64{0.05, 0.3, 1.0, 2.5, 3.9} {
		trig, echo := gpiosim.NewPin("t"), gpiosim.NewPin("e")
		(&gpiosim.HCSR04{Trigger: trig, Echo: echo, Distance: i2csim.Const(d), TemperatureC: 20}).Attach()
		r := hcsr04.Ranger{Trigger: trig, Echo: echo, MaxDistance: 4, TemperatureC: 20}
		got, ok, err := r.Measure(context.Background(), 3)
		if err != nil || !ok {
			t.Fatalf("%d: %v %v", i, ok, err)
		}
		// Datasheet: 3 mm ranging accuracy; polling adds a few µs (~1 mm).
		if math.Abs(got-d) > 0.005 {
			t.Errorf("distance %.4f m, want %.3f ± 0.005", got, d)
		}
	}
}

func TestRangerOutOfRangeAndUnplugged(t *testing.T) {
	trig, echo := gpiosim.NewPin("t"), gpiosim.NewPin("e")
	m := &gpiosim.HCSR04{Trigger: trig, Echo: echo, Distance: i2csim.Const(5), TemperatureC: 20}
	m.Attach()
	r := hcsr04.Ranger{Trigger: trig, Echo: echo, MaxDistance: 4, TemperatureC: 20}
	if _, ok, err := r.Measure(context.Background(), 2); ok || err != nil {
		t.Fatalf("5 m with max 4 m: ok=%v err=%v", ok, err)
	}
	m.SetConnected(false)
	if _, _, err := r.Measure(context.Background(), 2); err != hcsr04.ErrNoEcho {
		t.Fatalf("unplugged: %v", err)
	}
}

// A wrong air temperature scales the distance by the ratio of the speeds
// of sound: the option matters.
func TestTemperatureCompensation(t *testing.T) {
	trig, echo := gpiosim.NewPin("t"), gpiosim.NewPin("e")
	(&gpiosim.HCSR04{Trigger: trig, Echo: echo, Distance: i2csim.Const(2), TemperatureC: 35}).Attach()
	r := hcsr04.Ranger{Trigger: trig, Echo: echo, MaxDistance: 4, TemperatureC: 0}
	got, _, _ := r.Measure(context.Background(), 3)
	want := 2 * hcsr04.SpeedOfSound(0) / hcsr04.SpeedOfSound(35)
	if math.Abs(got-want) > 0.005 || math.Abs(got-2) < 0.08 {
		t.Errorf("got %.4f, want %.4f (uncompensated)", got, want)
	}
}

func TestObstacleThresholdOnSimBoard(t *testing.T) {
	block := `
- name: front
  kind: hcsr04
  pins: {trigger: "sim:trig1", echo: "sim:echo1"}
  interval: 60ms
  thresholds:
    - {quantity: distance, below: 0.30, hysteresis: 0.10, priority: high, event: obstacle}
  options:
    samples: 1
    sim:
      # approaching from 1 m to 10 cm and backing away again
      distance: {points: [{at: 0s, value: 1}, {at: 400ms, value: 0.1}, {at: 800ms, value: 1}]}
`
	cfg := kittest.Board(t, "sim", block)
	rec := kittest.NewRecorder()
	kittest.Start(t, cfg, sensors.WithThresholds("front", kittest.Thresholds(t, "sim", block), rec))
	rec.WaitFor(t, 3*time.Second, "obstacle and clear", func() bool { return len(rec.Events("obstacle_cleared")) == 1 })
	if got := rec.EventKinds(); got != "obstacle,obstacle_cleared" {
		t.Errorf("events %s", got)
	}
	if e := rec.Events("obstacle")[0]; e.Priority != worldmodel.High || e.Data["value"].(float64) >= 0.3 {
		t.Errorf("obstacle %+v", e)
	}
	min := math.Inf(1)
	for _, o := range rec.Observations("front.distance") {
		if o.Unit != "m" {
			t.Fatalf("unit %q", o.Unit)
		}
		min = math.Min(min, o.Value)
	}
	if min > 0.2 {
		t.Errorf("closest reading %.3f m; the scene reaches 0.1 m", min)
	}
}

func TestUnpluggedFaultCycle(t *testing.T) {
	cfg := kittest.Board(t, "sim", `
- name: r
  kind: hcsr04
  pins: {trigger: "sim:trig2", echo: "sim:echo2"}
  interval: 60ms
  options:
    samples: 1
    retry: {initial: 20ms, max: 40ms}
    sim: {distance: {base: 0.8}, unplugged: [{after: 150ms, for: 300ms}]}
`)
	rec := kittest.NewRecorder()
	kittest.Start(t, cfg, rec)
	rec.WaitFor(t, 3*time.Second, "fault and recovery", func() bool { return len(rec.Events(sensors.EventRecovered)) == 1 })
	if got := rec.EventKinds(); got != "sensor_fault,sensor_recovered" {
		t.Errorf("events %s", got)
	}
	if f := rec.Events(sensors.EventFault)[0]; !strings.Contains(f.Message, "no echo") {
		t.Errorf("fault message %q", f.Message)
	}
	n := len(rec.Values("r.distance"))
	rec.WaitFor(t, 2*time.Second, "readings after recovery", func() bool { return len(rec.Values("r.distance")) > n })
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{`- {name: r, kind: hcsr04, pins: {trigger: "sim:1"}}`, "pins.echo: required"},
		{`- {name: r, kind: hcsr04, pins: {trigger: "sim:1", echo: "sim:2"}, options: {samples: 0}}`, "samples: 0"},
		{`- {name: r, kind: hcsr04, pins: {trigger: "sim:1", echo: "sim:2"}, options: {max_distance: 10}}`, "max_distance: 10"},
	} {
		cfg, err := kittest.ParseBoard("sim", c.block)
		if err == nil {
			_, err = sensors.New(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s\n  err = %v\n want %q", c.block, err, c.want)
		}
	}
}

// countingPin counts polls of the echo line.
type countingPin struct {
	*gpiosim.Pin
	reads int
}

func (c *countingPin) Read() gpio.Level { c.reads++; return c.Pin.Read() }

// After a precise ping the ranger sleeps through most of the next echo
// instead of polling it; when the obstacle jumps closer, the stale hint
// costs a rejected ping, not a wrong distance.
func TestHintSavesPollingAndSurvivesSceneChange(t *testing.T) {
	trig, echoPin := gpiosim.NewPin("t"), gpiosim.NewPin("e")
	start := time.Now()
	scene := i2csim.Curve{Points: []i2csim.Point{{At: 0, Value: 3}, {At: time.Second, Value: 3}, {At: time.Second + time.Nanosecond, Value: 0.4}}}
	(&gpiosim.HCSR04{Trigger: trig, Echo: echoPin, Distance: scene, TemperatureC: 20}).Attach()
	echo := &countingPin{Pin: echoPin}
	r := hcsr04.Ranger{Trigger: trig, Echo: echo, MaxDistance: 4, TemperatureC: 20}
	// measure retries until a ping is precise (a loaded machine preempts
	// some) and returns the polls the successful call made.
	measure := func(want float64) int {
		t.Helper()
		for range 20 {
			echo.reads = 0
			d, ok, err := r.Measure(context.Background(), 1)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				if math.Abs(d-want) > 0.005 {
					t.Fatalf("distance %.4f, want %.3f", d, want)
				}
				return echo.reads
			}
		}
		t.Fatalf("no precise ping in 20 measurements")
		return 0
	}
	cold := measure(3) // no hint: polls the whole 17.5 ms echo
	hinted := cold
	for range 5 {
		hinted = min(hinted, measure(3))
	}
	if hinted*3 > cold {
		t.Errorf("with a hint %d polls, without %d: expected at least 3× fewer", hinted, cold)
	}
	time.Sleep(time.Until(start.Add(time.Second)))
	measure(0.4)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPing2m reports the process CPU time one ping at 2 m costs
// (cpu-µs/ping), with and without the hint from the previous ping; wall
// time per op is the echo itself.
//
//	go test -run '^$' -bench Ping -benchtime 100x ./sensors/gpio/hcsr04/
func BenchmarkPing2m(b *testing.B) {
	for _, hinted := range []bool{false, true} {
		name := "polling"
		if hinted {
			name = "hinted"
		}
		b.Run(name, func(b *testing.B) {
			trig, echo := gpiosim.NewPin("t"), gpiosim.NewPin("e")
			(&gpiosim.HCSR04{Trigger: trig, Echo: echo, Distance: i2csim.Const(2), TemperatureC: 20}).Attach()
			r := hcsr04.Ranger{Trigger: trig, Echo: echo, MaxDistance: 4, TemperatureC: 20}
			r.Measure(context.Background(), 1)
			cpu0 := cpuTime()
			b.ResetTimer()
			for b.Loop() {
				if !hinted {
					r = hcsr04.Ranger{Trigger: trig, Echo: echo, MaxDistance: 4, TemperatureC: 20}
				}
				r.Measure(context.Background(), 1)
			}
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/ping")
		})
	}
}
