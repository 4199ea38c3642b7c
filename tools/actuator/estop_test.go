package actuator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
	"github.com/edgeagent/edgeagent/worldmodel"
)

var everything = switches + servos[1:] + motor[1:] + `
  - name: fan
    kind: pwm
    pins: {pin: "sim:18"}
`

// nodeRaise stands in for node.Raise: record, then the Critical handlers
// synchronously.
func nodeRaise(r *rig) func(worldmodel.Event) {
	return func(e worldmodel.Event) {
		e = r.world.Record(e)
		if e.Priority >= worldmodel.Critical {
			r.set.HandleCritical(e)
		}
	}
}

func withNodeRaise() rigOpt { return func(c *rigConfig) { c.raise = nodeRaise } }

func TestEStopStopsEverythingAndLatches(t *testing.T) {
	r := newRig(t, everything, withStore(), withNodeRaise())
	r.must("mqtt", "drive.drive", `{"speed":0.5}`)
	r.must("mqtt", "winch.drive", `{"speed":0.4,"direction":"backward"}`)
	r.must("mqtt", "pump.set", `{"on":true}`)
	r.must("mqtt", "headlight.set", `{"on":true}`)
	r.must("mqtt", "fan.set", `{"duty":0.7}`)
	r.must("mqtt", "horn.beep", `{"count":10}`)
	r.must("mqtt", "pan.set_angle", `{"degrees":170}`)
	r.step(1, servo.RampStep, 1) // pan is moving

	before := r.sim.Count()
	res := r.must("mqtt", "estop.trigger", `{"reason":"child on the track"}`)
	// Motors first.
	for _, w := range r.sim.Writes() {
		if w.Seq == before+1 && w.Pin != "sim:22" && w.Pin != "sim:32" {
			t.Fatalf("first write of the e-stop went to %s, not a motor", w.Pin)
		}
	}
	rep := value(t, res)["report"].(map[string]any)
	if len(rep["stopped"].(map[string]any)) != 9 || rep["failed"] != nil || rep["pending"] != nil {
		t.Fatalf("e-stop report %v", rep)
	}
	for pin, want := range map[string]byte{"sim:20": 0, "sim:21": 0, "sim:30": 0, "sim:31": 0, "sim:12": 0, "sim:23": 1 /* active low: off */, "sim:25": 0} {
		if got := r.digital(pin); got != want {
			t.Errorf("after e-stop pin %s = %d, want %d", pin, got, want)
		}
	}
	for _, pin := range []string{"sim:22", "sim:32", "sim:18"} {
		if r.pwm(pin) != 0 {
			t.Errorf("after e-stop pwm %s = %d, want 0", pin, r.pwm(pin))
		}
	}
	if r.clk.Pending() != 0 {
		t.Fatal("a ramp, beep or dead-man timer survived the e-stop")
	}
	n := r.sim.Count()
	r.clk.Advance(10 * time.Second)
	if r.sim.Count() != n {
		t.Fatal("something moved after the e-stop")
	}
	for name, st := range r.world.Actuators() {
		if st != "stopped (estop)" {
			t.Errorf("world state of %s = %q", name, st)
		}
	}
	var kinds []string
	for _, e := range r.world.Events(0, worldmodel.Low, 100) {
		kinds = append(kinds, e.Kind)
	}
	if !strings.Contains(strings.Join(kinds, ","), "estop,actuators_stopped") {
		t.Fatalf("events %v: want estop then actuators_stopped", kinds)
	}
	if st := r.set.EStopState(); !st.Latched || st.Source != "skill" || !strings.Contains(st.Message, "mqtt: child on the track") {
		t.Fatalf("estop state %+v", st)
	}

	// Latched: every actuating command is refused, whoever sends it …
	for _, c := range []struct{ caller, tool, params string }{
		{"mqtt", "drive.drive", `{"speed":0.1}`},
		{"llm", "pan.set_angle", `{"degrees":90}`},
		{"llm", "pan.move_by", `{"degrees":5}`},
		{"reflex", "headlight.set", `{"on":true}`},
		{"cli", "horn.beep", `{}`},
		{"cli", "fan.set", `{"duty":0.3}`},
		{"cli", "pump.set", `{"on":true,"duration":1}`},
	} {
		_, err := r.call(c.caller, c.tool, c.params)
		if !errors.Is(err, actuator.ErrEStop) || !strings.Contains(err.Error(), "estop.reset") {
			t.Errorf("%s %s during e-stop: %v", c.caller, c.tool, err)
		}
	}
	if r.sim.Count() != n {
		t.Fatal("a refused command reached the hardware")
	}
	// … but stopping and switching off still work.
	for _, c := range []struct{ tool, params string }{
		{"drive.stop", `{}`}, {"drive.drive", `{"speed":0}`}, {"pan.stop", `{}`}, {"pump.set", `{"on":false}`}, {"fan.off", `{}`},
	} {
		r.must("mqtt", c.tool, c.params)
	}

	// Reset needs "admin": MQTT and the LLM have only read/actuate.
	for _, caller := range []string{"mqtt", "llm", "reflex"} {
		if _, err := r.call(caller, "estop.reset", `{}`); tools.CodeOf(err) != tools.CodeForbidden {
			t.Fatalf("estop.reset by %s: %v", caller, err)
		}
	}
	// An MQTT admin user gets the grant for its call.
	res, err := r.reg.Invoke(context.Background(), tools.Call{Caller: "mqtt", Grants: []string{"admin"}, Tool: "estop.reset"})
	if err != nil || value(t, res)["latched"] != false {
		t.Fatalf("admin reset: %v %v", res, err)
	}
	if r.set.Latched() || r.state("drive") != "stopped" || r.state("headlight") != "off" {
		t.Fatalf("after reset: latched=%v drive=%q headlight=%q", r.set.Latched(), r.state("drive"), r.state("headlight"))
	}
	if r.pwm("sim:22") != 0 {
		t.Fatal("reset restarted the motor")
	}
	r.must("mqtt", "drive.drive", `{"speed":0.2}`)
	if r.pwm("sim:22") != 51 {
		t.Fatal("drive refused after reset")
	}
	res = r.must("cli", "estop.reset", `{}`)
	if !contains(res.Notes, "not latched") {
		t.Fatalf("reset when not latched: %v", res.Notes)
	}

	entries := r.auditEntries(100, "")
	var sawStop, sawReset bool
	for _, e := range entries {
		sawStop = sawStop || (e.Tool == "estop" && e.Caller == "estop:skill" && e.Result == "ok")
		sawReset = sawReset || (e.Tool == "estop.reset" && e.Caller == "mqtt")
	}
	if !sawStop || !sawReset {
		t.Fatalf("e-stop or reset not audited: %+v", entries)
	}
}

func TestEStopFromAnySource(t *testing.T) {
	r := newRig(t, motor)
	r.must("mqtt", "drive.drive", `{"speed":0.5}`)
	r.set.HandleCritical(worldmodel.Event{Kind: "overheat", Priority: worldmodel.Critical, Source: "env"})
	if r.set.Latched() {
		t.Fatal("a Critical event that is not an e-stop latched it")
	}
	r.set.HandleCritical(worldmodel.Event{Kind: actuator.EStopKind, Priority: worldmodel.Critical, Source: "estop_button"})
	if !r.set.Latched() || r.pwm("sim:22") != 0 || r.set.EStopState().Source != "estop_button" {
		t.Fatal("e-stop from a GPIO button did not stop the motor")
	}
	// A second e-stop while latched stops again and keeps the first cause.
	r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "mqtt"})
	if st := r.set.EStopState(); st.Count != 2 || st.Source != "estop_button" {
		t.Fatalf("second e-stop: %+v", st)
	}
}

// A write that hangs (a wedged bus) holds only its own actuator: the others
// are stopped at once, EStop returns after its bound saying which one is
// pending, and that one is stopped as soon as the write comes back.
func TestEStopHungWriteDoesNotHoldOthers(t *testing.T) {
	r := newRig(t, everything)
	r.must("mqtt", "pump.set", `{"on":true}`)
	r.must("mqtt", "winch.drive", `{"speed":0.3}`)
	release := r.sim.Block("sim:22")
	defer release()
	hung := make(chan error, 1)
	go func() { _, err := r.call("mqtt", "drive.drive", `{"speed":0.5}`); hung <- err }()
	eventually(t, "the drive command hanging in its write", func() bool { return r.sim.Blocked("sim:22") == 1 })
	// EStop waits its bound on the set's clock: move the fake clock until
	// it gives up on the hung write.
	done := make(chan actuator.EStopReport, 1)
	go func() { done <- r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "test"}) }()
	var rep actuator.EStopReport
	for waiting := true; waiting; {
		select {
		case rep = <-done:
			waiting = false
		case <-time.After(time.Millisecond):
			r.clk.Advance(100 * time.Millisecond)
		}
	}
	if len(rep.Pending) != 1 || rep.Pending[0] != "drive" {
		t.Fatalf("pending %v, want [drive]", rep.Pending)
	}
	if r.digital("sim:23") != 1 || r.pwm("sim:32") != 0 {
		t.Fatal("the pump and the winch waited for the hung drive")
	}
	if _, err := r.call("mqtt", "winch.drive", `{"speed":0.3}`); !errors.Is(err, actuator.ErrEStop) {
		t.Fatalf("latched while a stop is pending: %v", err)
	}
	release()
	if err := <-hung; err != nil {
		t.Fatalf("the hung command: %v", err)
	}
	eventually(t, "drive stopped", func() bool { return r.state("drive") == "stopped (estop)" })
	eventually(t, "an actuator_stopped_late event", func() bool {
		evs := r.world.Events(0, worldmodel.Low, 100)
		return len(evs) > 0 && evs[len(evs)-1].Kind == "actuator_stopped_late" && evs[len(evs)-1].Source == "drive"
	})
	if r.pwm("sim:22") != 0 || r.digital("sim:20") != 0 {
		t.Fatal("drive not stopped after the write came back")
	}
}

func TestEStopBeforeStart(t *testing.T) {
	r := newRig(t, everything, notStarted())
	r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "test"})
	if r.sim.Count() != 0 {
		t.Fatal("hardware touched before Start")
	}
	if err := r.set.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Latched at start: the safe state instead of `initial` (pan would have
	// gone to 90°).
	if _, ok := r.sim.Servo("sim:13"); ok {
		t.Fatal("the servo moved to its initial angle under a latched e-stop")
	}
	if r.pwm("sim:22") != 0 || r.state("drive") != "stopped (estop)" {
		t.Fatal("motor not stopped at start under a latched e-stop")
	}
}

func TestAuditEntries(t *testing.T) {
	r := newRig(t, everything, withStore())
	r.must("reflex", "headlight.set", `{"on":true}`)
	r.must("llm", "pan.set_angle", `{"degrees":250}`) // clamped
	if _, err := r.direct("tilt.set_angle", `{"degrees":20}`); err == nil {
		t.Fatal("refusal expected")
	}
	r.must("mqtt", "drive.drive", `{"speed":0.25,"duration":3}`)

	// audit.query is an admin skill.
	if _, err := r.call("mqtt", "audit.query", `{}`); tools.CodeOf(err) != tools.CodeForbidden {
		t.Fatalf("audit.query by mqtt without admin: %v", err)
	}
	res := r.must("cli", "audit.query", `{"limit":4}`)
	data, _ := json.Marshal(res.Value)
	var got []actuator.Entry
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 4 {
		t.Fatalf("%d entries, want 4: %s", len(got), data)
	}
	want := []struct{ caller, tool, result, requested, applied, note string }{
		{"reflex", "headlight.set", "ok", `{"on":true,"duration":0}`, `{"on":true}`, ""},
		{"llm", "pan.set_angle", "ok", `{"degrees":250,"wait":false}`, `{"from":90,"target":170,"eta_s":0.889}`, "clamped from 250° to 170°"},
		{"", "tilt.set_angle", "refused", `{"degrees":20,"wait":false}`, ``, ""},
		{"mqtt", "drive.drive", "ok", `{"speed":0.25,"direction":"forward","duration":3}`, `{"direction":"forward","duty":64,"speed":0.25,"stops_in_s":2}`, "dead-man"},
	}
	for i, w := range want {
		e := got[i]
		if e.Caller != w.caller || e.Tool != w.tool || e.Result != w.result || string(e.Requested) != w.requested ||
			!jsonEqual(t, e.Applied, w.applied) || (w.note != "" && !contains(e.Notes, w.note)) || e.Seq == 0 || !e.Time.Equal(epoch) {
			t.Errorf("entry %d = %+v\nwant %+v", i, e, w)
		}
	}
	if !strings.Contains(got[2].Error, "outside the envelope") {
		t.Errorf("refusal entry does not say why: %q", got[2].Error)
	}
	// Filter by tool and by actuator.
	res = r.must("cli", "audit.query", `{"tool":"pan"}`)
	if es := res.Value.([]actuator.Entry); len(es) != 1 || es[0].Tool != "pan.set_angle" {
		t.Fatalf("filter by actuator: %+v", es)
	}
	// The store has them too, for `edgeagent audit`.
	es, err := actuator.ReadAudit(r.store, actuator.Query{Limit: 10, Tool: "drive.drive"}, 100)
	if err != nil || len(es) != 1 {
		t.Fatalf("ReadAudit: %v %+v", err, es)
	}
	if st := r.set.Snapshot().Audit; st.Written < 4 || st.Dropped != 0 || st.Failed != 0 {
		t.Fatalf("audit stats %+v", st)
	}
}

func jsonEqual(t *testing.T, got json.RawMessage, want string) bool {
	t.Helper()
	if len(got) == 0 || want == "" {
		return len(got) == 0 && want == ""
	}
	var a, b any
	if json.Unmarshal(got, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// Every goroutine an actuator starts (ramps, dead-man timers, beep
// patterns, e-stop helpers, the audit writer) ends with Stop.
func TestGoroutinesEndAtStop(t *testing.T) {
	r := newRig(t, everything, withStore())
	r.must("mqtt", "drive.drive", `{"speed":0.5}`)
	r.must("mqtt", "pan.set_angle", `{"degrees":10}`)
	r.must("mqtt", "horn.beep", `{"count":20}`)
	r.must("mqtt", "pump.set", `{"on":true,"duration":100}`)
	r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "test"})
	r.set.Reset()
	r.must("mqtt", "drive.drive", `{"speed":0.5}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	goleak.VerifyNone(t)
}

// The latch survives a restart, and so does its reset.
func TestEStopLatchSurvivesRestart(t *testing.T) {
	r := newRig(t, everything, withStore())
	r.must("mqtt", "drive.drive", `{"speed":0.5}`)
	r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "estop_button", Message: "pressed"})
	ctx := context.Background()
	if err := r.set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	restart := func() (*actuator.Set, *simadaptor.Adaptor) {
		t.Helper()
		sim := simadaptor.New(simadaptor.Options{})
		set, err := actuator.New(actuator.Options{Platform: "sim", Actuators: r.configs, Log: quiet, Adaptor: sim, Store: r.store})
		if err != nil {
			t.Fatal(err)
		}
		if err := set.Start(ctx); err != nil {
			t.Fatal(err)
		}
		return set, sim
	}
	set, sim := restart()
	if st := set.EStopState(); !st.Latched || st.Source != "estop_button" || st.Message != "pressed" {
		t.Fatalf("after a restart: %+v", st)
	}
	if _, ok := sim.Servo("sim:13"); ok {
		t.Fatal("the servo went to its initial angle while latched")
	}
	if v, _ := sim.PWM("sim:22"); v != 0 {
		t.Fatal("motor not stopped at start while latched")
	}
	set.Reset()
	if err := set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	set, sim = restart()
	defer set.Stop(ctx)
	if set.Latched() {
		t.Fatal("the reset did not survive the restart")
	}
	if v, _ := sim.Servo("sim:13"); v != 90 {
		t.Fatal("initial state not applied after the reset")
	}
}

// However many e-stops and resets, the store ends with the last state, and
// Stop does not wait for a pile of writes.
func TestEStopLatchWritesCoalesce(t *testing.T) {
	r := newRig(t, motor, withStore())
	for range 300 {
		r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "flood"})
		r.set.Reset()
	}
	r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "last"})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := r.set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	var st actuator.EStopStatus
	if ok, err := r.store.Get(actuator.LatchBucket, actuator.LatchKey, &st); err != nil || !ok || !st.Latched || st.Source != "last" {
		t.Fatalf("stored latch %+v (%v, %v)", st, ok, err)
	}
}
