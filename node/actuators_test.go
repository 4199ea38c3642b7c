package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/internal/benchlat"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
	"github.com/edgeagent/edgeagent/tools/toolstest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The sim board's actuators, a reflex that uses one, no MQTT and no LLM.
const actuatorBoard = `device: {id: act-bot, platform: sim}
data_dir: %s
agent: {heartbeat: 1h}
llm: {enabled: false}
plugins:
  mqtt: {enabled: false}
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
  - name: pan
    kind: servo
    pins: {pin: "sim:13"}
    limits: {min_angle: 10, max_angle: 170, max_rate: 90, on_violation: clamp}
    initial: "90"
  - name: drive
    kind: motor
    pins: {forward: "sim:20", backward: "sim:21", pwm: "sim:22"}
    limits: {max_speed: 0.6, deadman: 2s}
    initial: stop
  - {name: pump, kind: relay, pins: {pin: "sim:23"}, initial: "off"}
reflexes:
  - on: motion_start
    do: {tool: headlight.set, params: {on: true}}
`

func actuatorNode(t testing.TB) (*Node, string) {
	t.Helper()
	dir := t.TempDir()
	cfg, err := board.Parse(filepath.Join(dir, "act.yaml"), []byte(fmt.Sprintf(actuatorBoard, dir)))
	if err != nil {
		t.Fatal(err)
	}
	n, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return n, dir
}

func TestActuatorsOnTheSimBoard(t *testing.T) {
	n, dir := actuatorNode(t)
	stop := run(t, n)
	sim := actuatorSet(n).Adaptor().(*simadaptor.Adaptor)
	ctx := context.Background()
	if v, _ := sim.Servo("sim:13"); v != 90 {
		t.Fatalf("initial pan %d", v)
	}

	// A reflex goes through the same tools as everyone else.
	n.Raise(worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if v, _ := sim.Digital("sim:12"); v == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the motion reflex did not switch the headlight on")
		}
	}
	if _, err := n.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "drive.drive", Params: json.RawMessage(`{"speed":0.5}`)}); err != nil {
		t.Fatal(err)
	}
	if v, _ := sim.PWM("sim:22"); v != 128 {
		t.Fatal("drive not running")
	}

	// A GPIO e-stop button raises a Critical event: everything is stopped
	// when Raise returns, before the agent loop has seen it.
	n.Raise(worldmodel.Event{Kind: "estop", Source: "estop_button", Priority: worldmodel.Critical})
	if v, _ := sim.PWM("sim:22"); v != 0 {
		t.Fatal("drive still running when Raise returned")
	}
	if v, _ := sim.Digital("sim:12"); v != 0 {
		t.Fatal("headlight still on after the e-stop")
	}
	if st := n.World.Actuators()["drive"]; st != "stopped (estop)" {
		t.Fatalf("world state %q", st)
	}
	_, err := n.Tools.Invoke(ctx, tools.Call{Caller: "reflex", Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)})
	if !errors.Is(err, actuator.ErrEStop) {
		t.Fatalf("reflex during e-stop: %v", err)
	}
	if _, err := n.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "estop.reset"}); tools.CodeOf(err) != tools.CodeForbidden {
		t.Fatalf("estop.reset by mqtt: %v", err)
	}

	// agent.status reports the actuators and the latch.
	res, err := n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: "agent.status"})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(res.Value)
	if !strings.Contains(string(data), `"actuators":{"platform":"sim","started":true`) || !strings.Contains(string(data), `"latched":true`) {
		t.Fatalf("agent.status: %s", data)
	}
	var status struct {
		Components struct {
			Memory struct {
				// heap_live is 0 until the first collection, which a short
				// test may finish before; the runtime has always mapped
				// something.
				GoTotal uint64 `json:"go_total"`
			} `json:"memory"`
		} `json:"components"`
	}
	if err := json.Unmarshal(data, &status); err != nil || status.Components.Memory.GoTotal == 0 {
		t.Fatalf("agent.status has no memory component: %v %s", err, data)
	}
	if _, err := n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: "estop.reset"}); err != nil {
		t.Fatal(err)
	}
	if _, err := n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: "pump.set", Params: json.RawMessage(`{"on":true}`)}); err != nil {
		t.Fatal(err)
	}
	stop()

	// Stopping the agent leaves the outputs safe and the audit in the store.
	if v := sim.WritesTo("sim:23"); v[len(v)-1].Value != 0 {
		t.Fatal("pump left on at shutdown")
	}
	st, err := store.Open(filepath.Join(dir, "edgeagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := actuator.ReadAudit(st, actuator.Query{Limit: 100}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Caller+" "+e.Tool+" "+e.Result)
	}
	want := "reflex headlight.set ok|mqtt drive.drive ok|estop:estop_button estop ok|reflex headlight.set refused|cli estop.reset ok|cli pump.set ok|shutdown stop ok"
	if strings.Join(got, "|") != want {
		t.Fatalf("audit:\n%s\nwant\n%s", strings.Join(got, "|"), want)
	}
}

// `edgeagent check` and `tools` build the real boards' actuators on any
// machine: no adaptor is opened before the agent starts.
func TestActuatorsBuildWithoutHardware(t *testing.T) {
	for _, f := range []string{"rpi4", "rpi5", "jetson-orin-nano"} {
		cfg, err := board.Load(filepath.Join("..", "board-configs", f+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Sensors = nil // their kinds register elsewhere; this is about actuators
		n, err := New(cfg, Options{Log: slog.New(slog.DiscardHandler), NoStore: true})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := n.Tools.Resolve("pan.set_angle"); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if actuatorSet(n).Adaptor() != nil {
			t.Errorf("%s: adaptor opened before start", f)
		}
		_ = n.Close()
	}
}

// BenchmarkEStopViaRaise: a Critical "estop" event raised on the node (as
// the MQTT estop topic, a GPIO button or estop.trigger do) until every
// actuator is stopped, with the motor running and the servo ramping. The
// clock stops in a Critical handler registered after the actuators' one
// (handlers run in order), so the agent loop's own reaction is not in it.
func BenchmarkEStopViaRaise(b *testing.B) {
	n, _ := actuatorNode(b)
	var stopped time.Time
	addCriticalProbe(b, n, func(worldmodel.Event) { stopped = time.Now() })
	stop := run(b, n)
	defer stop()
	sim := actuatorSet(n).Adaptor().(*simadaptor.Adaptor)
	call := func(tool, params string) { toolstest.Invoke(b, n.Tools, tool, params) }
	lat := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		call("drive.drive", `{"speed":0.5}`)
		call("pan.set_angle", fmt.Sprintf(`{"degrees":%d}`, 10+160*(i%2)))
		call("pump.set", `{"on":true}`)
		b.StartTimer()
		t0 := time.Now()
		n.Raise(worldmodel.Event{Kind: "estop", Source: "bench", Priority: worldmodel.Critical})
		b.StopTimer()
		lat = append(lat, stopped.Sub(t0))
		if v, _ := sim.PWM("sim:22"); v != 0 {
			b.Fatal("drive running after the e-stop")
		}
		actuatorSet(n).Reset()
		b.StartTimer()
	}
	b.StopTimer()
	benchlat.Report(b, lat)
}
