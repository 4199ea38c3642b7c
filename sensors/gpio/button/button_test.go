package button_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	_ "github.com/edgeagent/edgeagent/sensors/gpio/button"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/gpio"
)

// A bouncing press is one event; so is its release.
func TestButtonBouncePressRelease(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: btn
  kind: button
  pins: {signal: "sim:btn1"}
  options: {debounce: 150ms, event: doorbell, release_event: doorbell_up}
`)
	rec.WaitFor(t, 2*time.Second, "initial", func() bool { return len(rec.Values("btn.pressed")) == 1 })
	pin := gpiosim.Shared("sim:btn1")
	for i := 0; i < 3; i++ {
		pin.Bounce(gpio.Low, 6, time.Millisecond) // pressed (active low)
		time.Sleep(400 * time.Millisecond)
		pin.Bounce(gpio.High, 4, time.Millisecond)
		time.Sleep(400 * time.Millisecond)
	}
	rec.WaitFor(t, 4*time.Second, "3 presses", func() bool { return len(rec.Events("doorbell_up")) == 3 })
	if got := rec.EventKinds(); got != "doorbell,doorbell_up,doorbell,doorbell_up,doorbell,doorbell_up" {
		t.Fatalf("events %s", got)
	}
	if e := rec.Events("doorbell")[0]; e.Priority != worldmodel.Normal || e.Source != "btn" {
		t.Errorf("event %+v", e)
	}
	if got := rec.Values("btn.pressed"); len(got) != 7 {
		t.Errorf("pressed readings %v", got)
	}
}

func TestEStopIsCriticalAndImmediate(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: estop
  kind: estop
  pins: {signal: "sim:es1"}
  options: {debounce: 200ms}
`)
	rec.WaitFor(t, 2*time.Second, "initial", func() bool { return len(rec.Values("estop.engaged")) == 1 })
	if v := rec.Values("estop.engaged")[0]; v != 0 {
		t.Fatalf("engaged at start: %v", v)
	}
	pin := gpiosim.Shared("sim:es1")
	pressed := time.Now()
	// The NC contact opens, bouncing: ten transitions queued at once (a
	// scheduler stall between them cannot stretch the bounce beyond the
	// debounce period, and without debounce each queued edge would flip
	// the state and raise again).
	pin.Bounce(gpio.High, 10, 0)
	rec.WaitFor(t, 2*time.Second, "estop", func() bool { return len(rec.Events("estop")) == 1 })
	e := rec.Events("estop")[0]
	if e.Priority != worldmodel.Critical || e.Source != "estop" {
		t.Errorf("event %+v", e)
	}
	// Leading edge: not held up by the 200 ms debounce.
	if lag := e.Time.Sub(pressed); lag > 100*time.Millisecond {
		t.Errorf("estop raised %s after the press", lag)
	}
	time.Sleep(400 * time.Millisecond)
	if n := len(rec.Events("estop")); n != 1 {
		t.Fatalf("%d estop events for one bouncing press", n)
	}
	pin.Bounce(gpio.Low, 4, time.Millisecond)
	rec.WaitFor(t, 2*time.Second, "released", func() bool { return len(rec.Events("estop_released")) == 1 })
	if e := rec.Events("estop_released")[0]; e.Priority != worldmodel.Normal {
		t.Errorf("release priority %s", e.Priority)
	}
}

// A normally-closed e-stop whose wire is cut reads as pressed, at start too.
func TestEStopEngagedAtStart(t *testing.T) {
	pin := gpiosim.Shared("sim:es2")
	pin.Float() // nothing holds the line low: the pull-up wins
	rec := sensortest.RunSim(t, `
- name: estop
  kind: estop
  pins: {signal: "sim:es2"}
  options: {sim: {presses: [{after: 0s, for: 1h}]}}
`)
	rec.WaitFor(t, 2*time.Second, "estop at start", func() bool { return len(rec.Events("estop")) == 1 })
	if !strings.Contains(rec.Events("estop")[0].Message, "at start") {
		t.Errorf("message %q", rec.Events("estop")[0].Message)
	}
}

// If the e-stop input cannot be opened the robot must not move: estop is
// raised once (with the fault), and the input recovers by itself.
func TestEStopFailSafe(t *testing.T) {
	pin := gpiosim.Shared("sim:es3")
	pin.SetBusy(true)
	rec := sensortest.RunSim(t, `
- name: estop
  kind: estop
  pins: {signal: "sim:es3"}
  options: {retry: {initial: 10ms, max: 20ms}}
`)
	rec.WaitFor(t, 2*time.Second, "fail-safe estop", func() bool { return len(rec.Events("estop")) == 1 })
	rec.WaitFor(t, 2*time.Second, "retries", func() bool { return len(rec.Observations("estop.health")) >= 4 })
	if n := len(rec.Events("estop")); n != 1 {
		t.Errorf("%d estop events while the input is down", n)
	}
	f := rec.Events(sensors.EventFault)
	if len(f) != 1 || f[0].Priority != worldmodel.High {
		t.Fatalf("fault events %+v", f)
	}
	if rec.Events("estop")[0].Data["fail_safe"] != true {
		t.Errorf("estop data %+v", rec.Events("estop")[0].Data)
	}
	pin.SetBusy(false)
	rec.WaitFor(t, 2*time.Second, "recovered", func() bool { return len(rec.Events(sensors.EventRecovered)) == 1 })
}

func TestOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: b, kind: button, pins: {signal: "sim:1"}, options: {event: "Door Bell"}}`, "options.event: must match"},
		{`- {name: b, kind: button}`, "pins.signal: required"},
		{`- {name: b, kind: estop, pins: {signal: "sim:1"}, options: {pull: down}}`, "options.pull: unknown key"},
		{`- {name: b, kind: estop, pins: {signal: "sim:1"}, options: {sim: {bounce: 99}}}`, "bounce: must be 0..50"},
	})
}
