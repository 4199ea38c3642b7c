package pir_test

import (
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/agent/agenttest"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	_ "github.com/edgeagent/edgeagent/sensors/gpio/pir"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/gpio"
)

func TestMotionRaisesHighInterrupt(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: hall_pir
  kind: pir
  pins: {signal: "sim:pir1"}
  options: {debounce: 10ms, sim: {motion: []}}
`)
	rec.WaitFor(t, 2*time.Second, "initial state", func() bool { return len(rec.Values("hall_pir.motion")) == 1 })
	if v := rec.Values("hall_pir.motion")[0]; v != 0 {
		t.Fatalf("initial motion %v", v)
	}
	pin := gpiosim.Shared("sim:pir1")
	moved := time.Now()
	pin.Set(gpio.High)
	rec.WaitFor(t, 2*time.Second, "motion_start", func() bool { return len(rec.Events("motion_start")) == 1 })
	e := rec.Events("motion_start")[0]
	if e.Priority != worldmodel.High || e.Source != "hall_pir" {
		t.Errorf("event %+v", e)
	}
	if lag := e.Time.Sub(moved); lag < 0 || lag > 100*time.Millisecond {
		t.Errorf("event dated %s after the edge", lag)
	}
	pin.Set(gpio.Low)
	rec.WaitFor(t, 2*time.Second, "motion_end", func() bool { return len(rec.Events("motion_end")) == 1 })
	if e := rec.Events("motion_end")[0]; e.Priority != worldmodel.Low {
		t.Errorf("motion_end priority %s", e.Priority)
	}
	if got := rec.Values("hall_pir.motion"); len(got) != 3 || got[1] != 1 || got[2] != 0 {
		t.Errorf("motion readings %v", got)
	}
}

func TestWarmupIgnoresEarlyTriggers(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: p
  kind: pir
  pins: {signal: "sim:pir2"}
  options: {debounce: 5ms, warmup: 150ms, sim: {motion: []}}
`)
	pin := gpiosim.Shared("sim:pir2")
	time.Sleep(20 * time.Millisecond)
	pin.Set(gpio.High) // spurious trigger while settling
	time.Sleep(30 * time.Millisecond)
	pin.Set(gpio.Low)
	time.Sleep(200 * time.Millisecond)
	if n := len(rec.Events("motion_start")); n != 0 {
		t.Fatalf("%d motion_start during warm-up", n)
	}
	pin.Set(gpio.High)
	rec.WaitFor(t, 2*time.Second, "motion after warm-up", func() bool { return len(rec.Events("motion_start")) == 1 })
}

// The sim board's default PIR script walks someone by.
func TestScriptedMotion(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: p
  kind: pir
  pins: {signal: "sim:pir3"}
  options: {debounce: 5ms, sim: {motion: [{after: 50ms, for: 100ms, every: 300ms}]}}
`)
	rec.WaitFor(t, 3*time.Second, "two walks", func() bool { return len(rec.Events("motion_end")) >= 2 })
	if k := rec.EventKinds(); !strings.HasPrefix(k, "motion_start,motion_end,motion_start,motion_end") {
		t.Errorf("events %s", k)
	}
}

func TestOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: p, kind: pir}`, "pins.signal: required"},
		{`- {name: p, kind: pir, pins: {signal: "sim:1", echo: "sim:2"}}`, "pins: a role pir does not have"},
		{`- {name: p, kind: pir, pins: {signal: "sim:1"}, options: {pull: sideways}}`, "options.pull: not up, down or none"},
		{`- {name: p, kind: pir, pins: {signal: "sim:1"}, options: {sim: {motion: [{for: 0s}]}}}`, "sim.motion[0]"},
	})
}

func TestBoardPriorityOverridesMotionStart(t *testing.T) {
	rec := sensortest.RunSim(t, `
- name: yard_pir
  kind: pir
  priority: normal
  pins: {signal: "sim:pir9"}
  options: {debounce: 1ms, sim: {motion: []}}
`)
	rec.WaitFor(t, 2*time.Second, "initial state", func() bool { return len(rec.Values("yard_pir.motion")) == 1 })
	gpiosim.Shared("sim:pir9").Set(gpio.High)
	rec.WaitFor(t, 2*time.Second, "motion_start", func() bool { return len(rec.Events("motion_start")) == 1 })
	if p := rec.Events("motion_start")[0].Priority; p != worldmodel.Normal {
		t.Fatalf("motion_start priority %s, want the board's normal", p)
	}
}

// A PIR firing while the agent is busy in a Normal-priority job preempts
// it, like camera motion does, and the next cycle is about the motion.
func TestPIRPreemptsABusyAgent(t *testing.T) {
	cfg := sensortest.Board(t, "sim", `
- name: porch_pir
  kind: pir
  pins: {signal: "sim:pir7"}
  options: {debounce: 1ms, sim: {motion: []}}
`)
	dec, seen := agenttest.Decider(func(agent.Perception) (agent.Decision, error) {
		return agent.Decision{Path: "reflex", Caller: "reflex"}, nil
	}, "motion_start")
	busy := agenttest.StartBusy(t, worldmodel.New(worldmodel.Config{}), dec)
	pin := gpiosim.Shared("sim:pir7")
	pin.Set(gpio.Low)
	sensortest.Start(t, cfg, busy.Sink())
	// The sensor reads the idle level first; the motion is an edge after it.
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, ok := busy.World.Latest("porch_pir.motion"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the PIR reported no initial level")
		}
	}
	pin.Set(gpio.High)
	busy.Preempted(t, "porch_pir/motion_start")
	select {
	case p := <-seen:
		if p.Event.Priority != worldmodel.High || p.Event.Source != "porch_pir" {
			t.Fatalf("motion cycle event %+v", p.Event)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no cycle for the PIR motion")
	}
}
