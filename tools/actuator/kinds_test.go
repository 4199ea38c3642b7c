package actuator_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/worldmodel"
)

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
	// "50" for 50 % is a slip of units, not a value to clamp to full power.
	if _, err := r.call("mqtt", "strip.set", `{"duty":50}`); tools.CodeOf(err) != tools.CodeInvalidParams {
		t.Fatalf("duty 50 with clamp: %v", err)
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
