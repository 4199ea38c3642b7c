package actuator_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
)

const servos = `
  - name: pan
    kind: servo
    pins: {pin: "sim:13"}
    limits: {min_angle: 10, max_angle: 170, max_rate: 90, on_violation: clamp}
    initial: "90"
  - name: tilt
    kind: servo
    pins: {pin: "sim:14"}
    limits: {min_angle: 45, max_angle: 135, max_rate: 60, on_violation: refuse}
`

// A move is ramped at max_rate: one write per 20 ms frame, never more than
// rate×Δt apart (plus the rounding to whole degrees of gobot's ServoDriver).
func TestServoRampIsRateLimited(t *testing.T) {
	r := newRig(t, servos)
	if v, _ := r.sim.Servo("sim:13"); v != 90 {
		t.Fatalf("initial angle %d, want 90", v)
	}
	start := r.clk.Now()
	res := r.must("mqtt", "pan.set_angle", `{"degrees":170}`)
	v := value(t, res)
	if v["target"] != 170.0 || v["from"] != 90.0 || math.Abs(v["eta_s"].(float64)-0.889) > 0.001 {
		t.Fatalf("result %v", v)
	}
	if !strings.HasPrefix(r.state("pan"), "moving") {
		t.Fatalf("state %q, want moving", r.state("pan"))
	}
	// 80° at 90°/s in 20 ms steps of 1.8°: ceil(80/1.8) = 45 writes.
	for range 45 {
		r.step(1, servo.RampStep, 1)
	}
	eventually(t, "pan arrived", func() bool { return r.state("pan") == "at 170°" })
	writes := r.sim.WritesTo("sim:13")[1:] // [0] is the initial 90
	if len(writes) != 45 {
		t.Fatalf("%d ramp writes, want 45", len(writes))
	}
	prev, prevT := 90.0, start
	for i, w := range writes {
		dt := w.Time.Sub(prevT).Seconds()
		if dt <= 0 || math.Abs(w.Value-prev) > 90*dt+1 {
			t.Fatalf("write %d: %v° after %v° in %.3fs exceeds 90°/s", i, w.Value, prev, dt)
		}
		prev, prevT = w.Value, w.Time
	}
	if last := writes[44]; last.Value != 170 || last.Time.Sub(start) != 900*time.Millisecond {
		t.Fatalf("arrived at %v° after %v, want 170° after 900ms", last.Value, last.Time.Sub(start))
	}
	if o, _ := r.world.Latest("pan.angle"); o.Value != 170 || o.Unit != "deg" {
		t.Fatalf("pan.angle observation %+v", o)
	}
	if r.clk.Pending() != 0 {
		t.Fatal("a timer is left after the ramp ended")
	}
}

// A new command takes over from where the servo is, without a jump; stop
// holds it there.
func TestServoNewCommandCancelsRamp(t *testing.T) {
	r := newRig(t, servos)
	r.must("mqtt", "pan.set_angle", `{"degrees":170}`)
	for range 10 { // 0.2 s: at 108°
		r.step(1, servo.RampStep, 1)
	}
	res := r.must("mqtt", "pan.set_angle", `{"degrees":10}`)
	if v := value(t, res); v["from"] != 108.0 {
		t.Fatalf("second move starts from %v, want 108 (where the first one got to)", v["from"])
	}
	r.step(1, servo.RampStep, 1)
	w := r.sim.WritesTo("sim:13")
	if got := w[len(w)-1].Value; got != 106 {
		t.Fatalf("first step back wrote %v°, want 106°", got)
	}
	r.step(1, servo.RampStep, 1) // 104.4 → 104
	r.must("mqtt", "pan.stop", `{}`)
	if r.state("pan") != "at 104°" { // gobot's ServoDriver writes whole degrees
		t.Fatalf("state after stop %q", r.state("pan"))
	}
	n := r.sim.Count()
	r.clk.Advance(time.Second)
	if r.sim.Count() != n || r.clk.Pending() != 0 {
		t.Fatal("the servo kept moving after stop")
	}
	// move_by is relative to where it is heading.
	r.must("mqtt", "pan.move_by", `{"degrees":-4}`)
	for range 3 { // 102.2, 100.4, then the target
		r.step(1, servo.RampStep, 1)
	}
	eventually(t, "pan at 100", func() bool { return r.state("pan") == "at 100°" })
}

func TestServoEnvelopeClampAndRefuse(t *testing.T) {
	r := newRig(t, servos)
	// clamp: the value is clamped and the reply says so.
	res := r.must("llm", "pan.set_angle", `{"degrees":200}`)
	if v := value(t, res); v["target"] != 170.0 || !contains(res.Notes, "clamped from 200° to 170°") {
		t.Fatalf("clamp: %v %v", v, res.Notes)
	}
	// refuse: the registry rejects it by the schema (the envelope is in it)…
	_, err := r.call("llm", "tilt.set_angle", `{"degrees":150}`)
	if tools.CodeOf(err) != tools.CodeInvalidParams || !strings.Contains(err.Error(), "135") {
		t.Fatalf("refuse via registry: %v", err)
	}
	// …and the actuator refuses it even without the registry.
	_, err = r.direct("tilt.set_angle", `{"degrees":150}`)
	if !errors.Is(err, actuator.ErrRefused) || !errors.Is(err, actuator.ErrEnvelope) || !strings.Contains(err.Error(), "outside the envelope 45–135°") {
		t.Fatalf("refuse direct: %v", err)
	}
	if _, ok := r.sim.Servo("sim:14"); ok {
		t.Fatal("a refused angle was written")
	}
	// A servo whose position is unknown jumps once, and says so.
	res = r.must("cli", "tilt.set_angle", `{"degrees":100}`)
	if v, _ := r.sim.Servo("sim:14"); v != 100 || !contains(res.Notes, "position was unknown") {
		t.Fatalf("first move of tilt: %d %v", v, res.Notes)
	}
	_, err = r.direct("tilt.move_by", `{"degrees":50}`)
	if !errors.Is(err, actuator.ErrEnvelope) {
		t.Fatalf("move_by past the envelope: %v", err)
	}
}

func TestServoWait(t *testing.T) {
	r := newRig(t, servos)
	done := make(chan map[string]any, 1)
	go func() {
		res, err := r.call("cli", "pan.set_angle", `{"degrees":99,"wait":true}`)
		if err != nil {
			t.Error(err)
		}
		done <- value(t, res)
	}()
	for range 5 { // 9° at 1.8° per step
		r.step(1, servo.RampStep, 1)
	}
	if v := <-done; v["arrived"] != true || v["angle"] != 99.0 {
		t.Fatalf("wait result %v", v)
	}
}

// A gpio servo moves in whole degrees: a fractional target is reached at
// its rounding, and the waiter is told it arrived.
func TestServoWaitFractionalTarget(t *testing.T) {
	r := newRig(t, servos)
	done := make(chan tools.Result, 1)
	go func() {
		res, err := r.call("cli", "pan.set_angle", `{"degrees":93.4,"wait":true}`)
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for range 2 { // 3.4° at 1.8° per step
		r.step(1, servo.RampStep, 1)
	}
	res := <-done
	if v := value(t, res); v["arrived"] != true || v["angle"] != 93.0 || contains(res.Notes, "stopped before") {
		t.Fatalf("wait result %v %v", v, res.Notes)
	}
}

const pca = `
  - name: pan
    kind: pca9685_servo
    bus: sim
    address: 0x40
    channel: 0
    limits: {min_angle: 10, max_angle: 170, max_rate: 120, on_violation: clamp}
    initial: "90"
  - name: tilt
    kind: pca9685_servo
    bus: sim
    address: 0x40
    channel: 1
    options: {pulse_min: 1ms, pulse_max: 2ms}
    initial: "0"
`

// Servos behind a PCA9685 go through periph's pca9685 driver to the
// simulated chip's registers; two servos share one chip without resetting
// each other.
func TestPCA9685Servo(t *testing.T) {
	if testing.Short() {
		t.Skip("periph's PCA9685 init sleeps 200 ms")
	}
	r := newRig(t, pca)
	chip := r.sim.I2CBus("sim").Device(0x40)
	near := func(got, want time.Duration) bool { return (got - want).Abs() <= 5*time.Microsecond } // one count is 4.9 µs
	if p := chip.Pulse(0); !near(p, 1500*time.Microsecond) {
		t.Fatalf("pan at 90°: pulse %v, want 1.5 ms", p)
	}
	if p := chip.Pulse(1); !near(p, time.Millisecond) {
		t.Fatalf("tilt at 0° with pulse_min 1ms: pulse %v", p)
	}
	r.must("mqtt", "pan.set_angle", `{"degrees":120}`)
	for range 13 { // 30° at 2.4° per step
		r.step(1, servo.RampStep, 1)
	}
	eventually(t, "pan at 120", func() bool { return r.state("pan") == "at 120°" })
	if p := chip.Pulse(0); !near(p, 1833*time.Microsecond) /* 500 µs + 120/180 × 2000 µs */ {
		t.Fatalf("pan at 120°: pulse %v", p)
	}
	if p := chip.Pulse(1); !near(p, time.Millisecond) {
		t.Fatal("moving pan changed tilt's channel")
	}
	prev := 1500.0
	for _, w := range r.sim.WritesTo("sim/0x40/0")[1:] {
		deg := (w.Value - prev) / 2000 * 180
		if math.Abs(deg) > 120*servo.RampStep.Seconds()+0.5 {
			t.Fatalf("PCA9685 step of %.2f° in one 20 ms frame exceeds 120°/s", deg)
		}
		prev = w.Value
	}
	r.sim.Fail("sim/0x40", errors.New("bus stuck"))
	_, err := r.call("mqtt", "tilt.set_angle", `{"degrees":10}`)
	if err == nil || !strings.Contains(err.Error(), "bus stuck") {
		t.Fatalf("I2C fault: %v", err)
	}
	if h := r.world.Health()["tilt"]; !strings.Contains(h, "bus stuck") {
		t.Fatalf("health %q does not report the fault", h)
	}
}
