package actuator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/internal/benchlat"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/tools/toolstest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// benchBoard has one actuator of every kind and no rate limits (a
// benchmark issues commands faster than any robot should).
const benchBoard = `
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
  - {name: pump, kind: relay, pins: {pin: "sim:23"}, initial: "off"}
  - {name: gate, kind: digital, pins: {pin: "sim:24"}}
  - {name: horn, kind: buzzer, pins: {pin: "sim:25"}}
  - {name: pan, kind: servo, pins: {pin: "sim:13"}, limits: {max_rate: 90}, initial: "90"}
  - {name: drive, kind: motor, pins: {forward: "sim:20", backward: "sim:21", pwm: "sim:22"}, limits: {max_speed: 0.6, deadman: 2s}}
  - {name: winch, kind: motor, pins: {forward: "sim:30", backward: "sim:31", pwm: "sim:32"}}
  - {name: fan, kind: pwm, pins: {pin: "sim:18"}}
`

// BenchmarkEStop: e-stop → every actuator stopped, with both motors
// running, the servo ramping on the wall clock, a beep pattern playing and
// the outputs on. The budget is 10 ms.
func BenchmarkEStop(b *testing.B) {
	r := newRig(b, benchBoard, withRealClock())
	call := func(tool, params string) { toolstest.Invoke(b, r.reg, tool, params) }
	took := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		call("drive.drive", `{"speed":0.5}`)
		call("winch.drive", `{"speed":0.8,"direction":"backward"}`)
		call("pan.set_angle", fmt.Sprintf(`{"degrees":%d}`, 10+160*(i%2)))
		call("horn.beep", `{"count":20}`)
		call("pump.set", `{"on":true}`)
		call("headlight.set", `{"on":true}`)
		call("fan.set", `{"duty":0.9}`)
		b.StartTimer()
		rep := r.set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "bench"})
		b.StopTimer()
		if len(rep.Failed)+len(rep.Pending) > 0 || len(rep.Stopped) != 8 {
			b.Fatalf("e-stop report %+v", rep)
		}
		if v, _ := r.sim.PWM("sim:22"); v != 0 {
			b.Fatal("drive still running after the e-stop")
		}
		took = append(took, rep.Took)
		r.set.Reset()
		b.StartTimer()
	}
	benchlat.Report(b, took)
}

// BenchmarkActuate: one command through the tool registry (resolution,
// permission, schema validation with defaults, envelope, gobot driver, sim
// adaptor write, world model, audit) as MQTT, a reflex or the LLM sends it.
func BenchmarkActuate(b *testing.B) {
	for _, bc := range []struct {
		name, tool string
		params     [2]string
	}{
		{"led", "headlight.set", [2]string{`{"on":true}`, `{"on":false}`}},
		{"motor_deadman", "drive.drive", [2]string{`{"speed":0.5}`, `{"speed":0.4}`}},
		{"servo_ramp", "pan.set_angle", [2]string{`{"degrees":10}`, `{"degrees":170}`}},
	} {
		for _, audit := range []string{"memory", "store"} {
			b.Run(bc.name+"/audit="+audit, func(b *testing.B) {
				var opts []rigOpt
				if audit == "store" {
					opts = append(opts, withStore())
				}
				r := newRig(b, benchBoard, append(opts, withRealClock())...)
				ctx := context.Background()
				calls := [2]tools.Call{
					{Caller: "mqtt", Tool: bc.tool, Params: json.RawMessage(bc.params[0])},
					{Caller: "mqtt", Tool: bc.tool, Params: json.RawMessage(bc.params[1])},
				}
				lat := make([]time.Duration, 0, b.N)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					t0 := time.Now()
					if _, err := r.reg.Invoke(ctx, calls[i%2]); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				if err := r.set.AuditSync(ctx); err != nil {
					b.Fatal(err)
				}
				st := r.set.Snapshot().Audit
				if st.Failed != 0 {
					b.Fatalf("audit entries failed: %+v", st)
				}
				// Flat out, commands outrun any disk; entries drop only when
				// one write stalls longer than enqueueWait.
				b.ReportMetric(float64(st.Dropped), "audit-dropped")
				benchlat.Report(b, lat)
			})
		}
	}
}
