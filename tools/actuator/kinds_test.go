package actuator_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	"github.com/edgeagent/edgeagent/worldmodel"
)

const switches = `
  - name: headlight
    kind: led
    pins: {pin: "sim:12"}
    initial: "off"
  - name: pump
    kind: relay
    pins: {pin: "sim:23"}
    options: {active_low: true}
    initial: "off"
  - name: gate
    kind: digital
    pins: {pin: "sim:24"}
  - name: horn
    kind: buzzer
    pins: {pin: "sim:25"}
    initial: "off"
`

func TestSwitchKinds(t *testing.T) {
	r := newRig(t, switches)
	// initial: off; the active-low relay is off with its pin high.
	if r.digital("sim:12") != 0 || r.digital("sim:23") != 1 || r.digital("sim:25") != 0 {
		t.Fatal("initial states not applied")
	}
	if _, ok := r.sim.Digital("sim:24"); ok {
		t.Fatal("an actuator without `initial` was written at start")
	}
	for _, tc := range []struct {
		tool, params, pin string
		level             byte
		state             string
	}{
		{"headlight.set", `{"on":true}`, "sim:12", 1, "on"},
		{"pump.set", `{"on":true}`, "sim:23", 0, "on"},
		{"gate.set", `{"on":true}`, "sim:24", 1, "on"},
		{"horn.set", `{"on":true}`, "sim:25", 1, "on"},
		{"headlight.set", `{"on":false}`, "sim:12", 0, "off"},
		{"pump.set", `{"on":false}`, "sim:23", 1, "off"},
	} {
		res := r.must("reflex", tc.tool, tc.params)
		if got := r.digital(tc.pin); got != tc.level {
			t.Errorf("%s %s: pin %s = %d, want %d", tc.tool, tc.params, tc.pin, got, tc.level)
		}
		name := strings.Split(tc.tool, ".")[0]
		if got := r.state(name); got != tc.state {
			t.Errorf("%s: world state %q, want %q", tc.tool, got, tc.state)
		}
		if value(t, res)["on"] != (tc.state == "on") {
			t.Errorf("%s: result %v does not say what was applied", tc.tool, res.Value)
		}
	}
	if o, ok := r.world.Latest("gate.on"); !ok || o.Value != 1 {
		t.Errorf("gate.on observation = %+v, %v", o, ok)
	}
}

func TestSwitchDurationSwitchesOffByItself(t *testing.T) {
	r := newRig(t, switches, withStore())
	res := r.must("mqtt", "pump.set", `{"on":true,"duration":30}`)
	if value(t, res)["off_in_s"] != 30.0 || r.digital("sim:23") != 0 {
		t.Fatalf("pump not on for 30 s: %v", res.Value)
	}
	r.step(1, 29*time.Second, 0)
	if r.digital("sim:23") != 0 {
		t.Fatal("pump switched off early")
	}
	r.step(1, time.Second, 1)
	if r.digital("sim:23") != 1 {
		t.Fatal("pump still on after its duration")
	}
	// The entry is filed just after the write.
	eventually(t, "the auto-off audited as the timer's action", func() bool {
		entries := r.auditEntries(10, "pump")
		last := entries[len(entries)-1]
		return last.Caller == "timer" && string(last.Applied) == `{"on":false}`
	})
}

func TestBuzzerBeepPattern(t *testing.T) {
	r := newRig(t, switches)
	start := r.clk.Now()
	res := r.must("llm", "horn.beep", `{"count":3,"duration":0.2,"gap":0.1}`)
	if v := value(t, res); v["total_s"] != 0.8 {
		t.Fatalf("beep result %v: want total 0.8 s", v)
	}
	r.step(1, 200*time.Millisecond, 1)
	r.step(1, 100*time.Millisecond, 1)
	r.step(1, 200*time.Millisecond, 1)
	r.step(1, 100*time.Millisecond, 1)
	r.step(1, 200*time.Millisecond, 1)
	var got []string
	for _, w := range r.sim.WritesTo("sim:25")[1:] { // [0] is the initial off
		got = append(got, fmtWrite(w.Value, w.Time.Sub(start)))
	}
	want := []string{"1@0s", "0@200ms", "1@300ms", "0@500ms", "1@600ms", "0@800ms"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("beep writes %v, want %v", got, want)
	}
	eventually(t, "horn off", func() bool { return r.state("horn") == "off" })
	if r.clk.Pending() != 0 {
		t.Fatal("a timer is left after the pattern ended")
	}
}

func fmtWrite(v float64, at time.Duration) string {
	return map[float64]string{0: "0", 1: "1"}[v] + "@" + at.String()
}

func TestOptionsAreCheckedAtBuild(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"  - {name: a, kind: led, pins: {pin: x}, options: {on_estop: maybe}}\n", "on_estop"},
		{"  - {name: a, kind: led, pins: {pin: x}, options: {brightness: 3}}\n", "brightness"},
		{"  - {name: a, kind: servo, pins: {pin: x}, options: {range: 270}}\n", "0–180°"},
		{"  - {name: a, kind: pca9685_servo, options: {pulse_min: 3ms, pulse_max: 2ms}}\n", "pulse_min"},
		{"  - {name: a, kind: pca9685_servo, options: {range: 90}}\n", "exceed the servo's range"},
		{"  - {name: estop, kind: led, pins: {pin: x}}\n", "taken"},
		// initial is written at start without a tool call: the envelope
		// holds it too, also where board.Load lets it through (NaN).
		{"  - {name: a, kind: servo, pins: {pin: x}, limits: {min_angle: 10, max_angle: 120}, initial: \"NaN\"}\n", "initial NaN° is outside the envelope 10–120°"},
		{"  - {name: a, kind: pca9685_servo, limits: {min_angle: 30}, initial: \"nan\"}\n", "outside the envelope 30–180°"},
		{"  - {name: a, kind: pwm, pins: {pin: x}, limits: {max_duty: 0.5}, initial: \"NaN\"}\n", "initial NaN is outside the envelope 0–0.5"},
	} {
		cfg := parseBoard(t, "sim", tc.yaml)
		_, err := actuator.New(actuator.Options{Platform: "sim", Actuators: cfg.Actuators, Log: quiet})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error about %q", strings.TrimSpace(tc.yaml), err, tc.want)
		}
	}
	// Actuator blocks that did not come through board.Load (no defaults,
	// no cross-checks): the envelope still holds the initial state.
	maxAngle, maxDuty := 120.0, 0.5
	for _, a := range []actuator.Config{
		{Name: "a", Kind: "servo", Pins: map[string]string{"pin": "x"}, Limits: actuator.Limits{MaxAngle: &maxAngle}, Initial: "150"},
		{Name: "a", Kind: "pwm", Pins: map[string]string{"pin": "x"}, Limits: actuator.Limits{MaxDuty: &maxDuty}, Initial: "0.9"},
	} {
		_, err := actuator.New(actuator.Options{Platform: "sim", Actuators: []actuator.Config{a}, Log: quiet})
		if err == nil || !strings.Contains(err.Error(), "outside the envelope") {
			t.Errorf("%s initial %s: got %v, want an envelope error", a.Kind, a.Initial, err)
		}
	}
}

func TestPlatformsRejectPinsWithoutPWM(t *testing.T) {
	cfg := parseBoard(t, "raspi", `  - {name: pan, kind: servo, pins: {pin: "16"}}`+"\n")
	_, err := actuator.New(actuator.Options{Platform: "raspi", Model: "rpi4", Actuators: cfg.Actuators, Log: quiet})
	if err == nil || !strings.Contains(err.Error(), "no hardware PWM") {
		t.Fatalf("servo on raspi pin 16: got %v", err)
	}
	cfg = parseBoard(t, "raspi", `  - {name: pan, kind: servo, pins: {pin: "12"}}
  - {name: tilt, kind: servo, pins: {pin: "32"}}
`)
	_, err = actuator.New(actuator.Options{Platform: "raspi", Model: "rpi4", Actuators: cfg.Actuators, Log: quiet})
	if err == nil || !strings.Contains(err.Error(), "already used by pan") {
		t.Fatalf("two servos on pwm0: got %v", err)
	}
	cfg = parseBoard(t, "raspi", `  - {name: pan, kind: servo, pins: {pin: "16"}}`+"\n")
	if _, err := actuator.New(actuator.Options{Platform: "raspi", Model: "rpi4", Actuators: cfg.Actuators, Log: quiet, Settings: actuator.Settings{PWM: "pi-blaster"}}); err != nil {
		t.Fatalf("pi-blaster drives any pin: %v", err)
	}
	cfg = parseBoard(t, "jetson", `  - {name: fan, kind: pwm, pins: {pin: "31"}}`+"\n")
	if _, err := actuator.New(actuator.Options{Platform: "jetson", Model: "jetson-orin-nano", Actuators: cfg.Actuators, Log: quiet}); err == nil {
		t.Fatal("pwm on jetson pin 31 accepted")
	}
	// The board files in the repository build without hardware.
	for _, f := range []string{"rpi4", "rpi5", "jetson-orin-nano", "sim"} {
		cfg, err := loadRepoBoard(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := actuator.New(actuator.Options{Platform: cfg.Device.Platform, Model: cfg.Device.Model, Actuators: cfg.Actuators, Log: quiet}); err != nil {
			t.Errorf("%s.yaml: %v", f, err)
		}
	}
}

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

const motor = `
  - name: drive
    kind: motor
    pins: {forward: "sim:20", backward: "sim:21", pwm: "sim:22"}
    limits: {max_speed: 0.6, deadman: 2s, rate_limit: 10}
    initial: stop
  - name: winch
    kind: motor
    pins: {forward: "sim:30", backward: "sim:31", pwm: "sim:32"}
    limits: {max_speed: 0.5, on_violation: clamp}
`

func TestMotorDriveAndDeadman(t *testing.T) {
	r := newRig(t, motor, withStore())
	res := r.must("mqtt", "drive.drive", `{"speed":0.5}`)
	if r.digital("sim:20") != 1 || r.digital("sim:21") != 0 || r.pwm("sim:22") != 128 {
		t.Fatal("drive forward 0.5: wrong pins")
	}
	if !contains(res.Notes, "dead-man") || value(t, res)["stops_in_s"] != 2.0 {
		t.Fatalf("the reply does not say the dead-man applies: %v %v", res.Value, res.Notes)
	}
	r.step(1, 1900*time.Millisecond, 0)
	r.must("mqtt", "drive.drive", `{"speed":0.5}`) // refresh
	r.step(1, 1900*time.Millisecond, 0)
	if r.pwm("sim:22") != 128 {
		t.Fatal("a refreshed motor stopped")
	}
	r.step(1, 100*time.Millisecond, 3) // pwm 0, forward 0, backward 0
	if r.pwm("sim:22") != 0 || r.digital("sim:20") != 0 || r.digital("sim:21") != 0 {
		t.Fatal("dead-man did not stop the motor")
	}
	eventually(t, "dead-man state", func() bool { return r.state("drive") == "stopped (dead-man)" })
	// The event and the audit entry are filed just after the stop.
	eventually(t, "a deadman_stop event", func() bool {
		evs := r.world.Events(0, worldmodel.Low, 10)
		return len(evs) > 0 && evs[len(evs)-1].Kind == "deadman_stop"
	})
	eventually(t, "the dead-man stop audited", func() bool {
		e := r.auditEntries(1, "drive")[0]
		return e.Caller == "deadman" && e.Tool == "drive.stop"
	})

	// A duration shorter than the dead-man stops the motor at the duration.
	r.must("mqtt", "drive.drive", `{"speed":0.3,"direction":"backward","duration":0.5}`)
	if r.digital("sim:21") != 1 || r.pwm("sim:22") != 77 {
		t.Fatal("drive backward 0.3")
	}
	r.step(1, 500*time.Millisecond, 3)
	eventually(t, "stopped", func() bool { return r.state("drive") == "stopped" })
}

func TestMotorReverseCutsPowerFirst(t *testing.T) {
	r := newRig(t, motor)
	r.must("mqtt", "drive.drive", `{"speed":0.5}`)
	n := r.sim.Count()
	r.must("mqtt", "drive.drive", `{"speed":0.5,"direction":"backward"}`)
	var seq []string
	for _, w := range r.sim.Writes() {
		if w.Seq > n {
			seq = append(seq, fmt.Sprintf("%s=%g", w.Pin, w.Value))
		}
	}
	// pwm 0 before the direction pins change, then the new speed.
	if strings.Join(seq, " ") != "sim:22=0 sim:20=0 sim:21=1 sim:22=128" {
		t.Fatalf("reverse writes %v: want speed 0 first", seq)
	}
	if r.pwm("sim:22") != 128 {
		t.Fatal("speed not restored after the reversal")
	}
}

func TestMotorSpeedEnvelope(t *testing.T) {
	r := newRig(t, motor)
	_, err := r.call("mqtt", "drive.drive", `{"speed":0.8}`)
	if tools.CodeOf(err) != tools.CodeInvalidParams {
		t.Fatalf("speed 0.8 > max 0.6 (refuse) via registry: %v", err)
	}
	if _, err := r.direct("drive.drive", `{"speed":0.8}`); !errors.Is(err, actuator.ErrEnvelope) {
		t.Fatalf("speed 0.8 direct: %v", err)
	}
	if r.pwm("sim:22") != 0 {
		t.Fatal("a refused speed was written")
	}
	res := r.must("mqtt", "winch.drive", `{"speed":0.9}`)
	if v := value(t, res); v["speed"] != 0.5 || v["duty"] != 128.0 || !contains(res.Notes, "speed clamped from 0.9 to 0.5") {
		t.Fatalf("clamp: %v %v", v, res.Notes)
	}
	if r.clk.Pending() != 0 {
		t.Fatal("winch has no dead-man and no duration: nothing should be timed")
	}
	r.must("mqtt", "winch.drive", `{"speed":0}`)
	if r.pwm("sim:32") != 0 || r.state("winch") != "stopped" {
		t.Fatal("speed 0 does not stop")
	}
}

func TestRateLimit(t *testing.T) {
	r := newRig(t, `
  - name: pump
    kind: relay
    pins: {pin: "sim:23"}
    limits: {rate_limit: 1}
    initial: "off"
`, withStore())
	r.must("mqtt", "pump.set", `{"on":true}`)
	_, err := r.call("mqtt", "pump.set", `{"on":true}`)
	if !errors.Is(err, actuator.ErrRateLimited) || !strings.Contains(err.Error(), "at most 1 commands/s; retry in 1s") {
		t.Fatalf("second command within 1 s: %v", err)
	}
	// Switching off is always allowed: the rate limit protects the relay
	// from chatter, it must not keep a pump running.
	r.must("mqtt", "pump.set", `{"on":false}`)
	r.clk.Advance(999 * time.Millisecond)
	if _, err := r.call("mqtt", "pump.set", `{"on":true}`); !errors.Is(err, actuator.ErrRateLimited) {
		t.Fatalf("after 999 ms: %v", err)
	}
	r.clk.Advance(time.Millisecond)
	r.must("mqtt", "pump.set", `{"on":true}`)
	if st := r.set.Snapshot().Actuators["pump"]; st.RateLimited != 2 {
		t.Fatalf("rate-limited count %d, want 2", st.RateLimited)
	}
	// Refusals by the rate limit are counted, not audited one by one.
	for _, e := range r.auditEntries(100, "") {
		if strings.Contains(e.Error, "rate") {
			t.Fatalf("rate-limit refusal in the audit log: %+v", e)
		}
	}
}

func TestBucketBurst(t *testing.T) {
	b := actuator.NewBucket(10)
	now := epoch
	for i := range 10 {
		if ok, _ := b.Take(now); !ok {
			t.Fatalf("command %d of a 10/s burst refused", i)
		}
	}
	if ok, wait := b.Take(now); ok || wait != 100*time.Millisecond {
		t.Fatalf("11th: ok=%v wait=%v", ok, wait)
	}
	if ok, _ := b.Take(now.Add(100 * time.Millisecond)); !ok {
		t.Fatal("after 100 ms one token should be back")
	}
	if actuator.NewBucket(0) != nil {
		t.Fatal("rate 0 means no limit")
	}
}

func TestPWMDutyBounds(t *testing.T) {
	r := newRig(t, `
  - name: fan
    kind: pwm
    pins: {pin: "sim:18"}
    limits: {min_duty: 0.2, max_duty: 0.8}
  - name: strip
    kind: pwm
    pins: {pin: "sim:19"}
    limits: {max_duty: 0.5, on_violation: clamp}
    options: {on_estop: hold}
`)
	res := r.must("mqtt", "fan.set", `{"duty":0.5}`)
	if r.pwm("sim:18") != 128 || value(t, res)["level"] != 128.0 || r.state("fan") != "duty 0.5" {
		t.Fatalf("fan 0.5: %v", res.Value)
	}
	if _, err := r.direct("fan.set", `{"duty":0.1}`); !errors.Is(err, actuator.ErrEnvelope) {
		t.Fatalf("duty below min_duty: %v", err)
	}
	r.must("mqtt", "fan.off", `{}`)
	if r.pwm("sim:18") != 0 || r.state("fan") != "off" {
		t.Fatal("fan.off (below min_duty) must be allowed")
	}
	res = r.must("mqtt", "strip.set", `{"duty":1}`)
	if r.pwm("sim:19") != 128 || !contains(res.Notes, "duty clamped from 1 to 0.5") {
		t.Fatalf("strip clamp: %v", res.Notes)
	}
	rep := r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "test"})
	if r.pwm("sim:19") != 128 || !strings.Contains(rep.Stopped["strip"], "hold") {
		t.Fatalf("on_estop: hold not honoured: %+v", rep)
	}
}

func TestWriteFailureIsReported(t *testing.T) {
	r := newRig(t, switches, withStore())
	r.sim.Fail("sim:12", errors.New("gpiochip busy"))
	_, err := r.call("mqtt", "headlight.set", `{"on":true}`)
	if err == nil || !strings.Contains(err.Error(), "gpiochip busy") || errors.Is(err, actuator.ErrRefused) {
		t.Fatalf("write failure: %v", err)
	}
	if h := r.world.Health()["headlight"]; !strings.Contains(h, "gpiochip busy") {
		t.Fatalf("health %q", h)
	}
	if e := r.auditEntries(1, "headlight")[0]; e.Result != "failed" || !strings.Contains(e.Error, "gpiochip busy") {
		t.Fatalf("audit %+v", e)
	}
	r.sim.Fail("sim:12", nil)
	r.must("mqtt", "headlight.set", `{"on":true}`)
	if h := r.world.Health()["headlight"]; h != "ok" {
		t.Fatalf("health after recovery %q", h)
	}
}

func TestNotStarted(t *testing.T) {
	r := newRig(t, switches, notStarted())
	_, err := r.call("mqtt", "headlight.set", `{"on":true}`)
	if !errors.Is(err, actuator.ErrNotStarted) {
		t.Fatalf("before Start: %v", err)
	}
	if r.sim.Count() != 0 || r.sim.Connected() {
		t.Fatal("hardware touched before Start")
	}
}

func TestStopLeavesEverythingSafe(t *testing.T) {
	r := newRig(t, switches+servos[1:]+motor[1:])
	r.must("mqtt", "headlight.set", `{"on":true}`)
	r.must("mqtt", "pump.set", `{"on":true,"duration":60}`)
	r.must("mqtt", "drive.drive", `{"speed":0.4}`)
	r.must("mqtt", "pan.set_angle", `{"degrees":10}`)
	r.must("mqtt", "horn.beep", `{"count":5}`)
	ctx, cancel := contextWithTimeout(5 * time.Second)
	defer cancel()
	if err := r.set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if r.sim.Connected() {
		t.Fatal("adaptor not finalized")
	}
	lastLevel := map[string]float64{}
	for _, w := range r.sim.Writes() {
		lastLevel[w.Pin] = w.Value
	}
	for pin, want := range map[string]float64{"sim:12": 0, "sim:23": 1 /* active low */, "sim:25": 0, "sim:22": 0, "sim:20": 0, "sim:21": 0} {
		if lastLevel[pin] != want {
			t.Errorf("pin %s last written %v, want %v", pin, lastLevel[pin], want)
		}
	}
	if r.clk.Pending() != 0 {
		t.Fatal("timers left after Stop")
	}
	if _, err := r.call("mqtt", "headlight.set", `{"on":true}`); !errors.Is(err, actuator.ErrNotStarted) {
		t.Fatalf("after Stop: %v", err)
	}
}
