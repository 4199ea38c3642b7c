package actuator_test

import (
	"strings"
	"testing"
	"time"
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
