package agent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/tools"
)

// matcherCommands is a scripted command set: plain commands with the tool
// and params a person would expect, and commands the matcher must leave to
// the LLM (want ""). BenchmarkLocalMatcherShare reports the share handled.
var matcherCommands = []struct {
	text, tool, params string
}{
	{"turn on the headlight", "headlight.set", `{"on":true}`},
	{"Turn the headlight off.", "headlight.set", `{"on":false}`},
	{"headlight on", "headlight.set", `{"on":true}`},
	{"switch off the headlight please", "headlight.set", `{"on":false}`},
	{"pan to 90 degrees", "pan.set_angle", `{"degrees":90,"wait":false}`},
	{"pan to 45°", "pan.set_angle", `{"degrees":45,"wait":false}`},
	{"set the pan angle to 120", "pan.set_angle", `{"degrees":120,"wait":false}`},
	{"pan by -30 degrees", "pan.move_by", `{"degrees":-30,"wait":false}`},
	{"move the pan by 10", "pan.move_by", `{"degrees":10,"wait":false}`},
	{"stop the pan", "pan.stop", `{}`},
	{"stop the drive", "drive.stop", `{}`},
	{"drive forward at 50%", "drive.move", `{"direction":"forward","speed":0.5}`},
	{"drive backward", "drive.move", `{"direction":"backward","speed":0.3}`},
	{"beep", "buzzer.beep", `{"count":1,"duration":0.2,"gap":0.2}`},
	{"beep the buzzer 3 times", "buzzer.beep", `{"count":3,"duration":0.2,"gap":0.2}`},
	{"blink the headlight 4 times", "headlight.blink", `{"times":4}`},
	{"start the pump", "pump.set", `{"on":true}`},
	{"pump off", "pump.set", `{"on":false}`},
	{"can you turn the pump on", "pump.set", `{"on":true}`},
	// Not plain: the LLM's job.
	{"it is getting dark, light the way", "", ""},
	{"turn on the headlight and pan to 90", "", ""},
	{"don't turn on the headlight", "", ""},
	{"is the headlight on?", "", ""},
	{"pan to 200 degrees", "", ""}, // out of range: not for the matcher to clamp
	{"turn on the headlight slowly", "", ""},
	{"pan the camera left", "", ""},
	{"turn it on", "", ""},
	{"headlight", "", ""},
	{"blink the headlight", "", ""}, // how many times?
	{"drive", "", ""},
	{"turn the headlight and the pump on", "", ""},
	{"if it rains stop", "", ""},
	{"water the plants", "", ""},
	{"publish a note saying hello", "", ""},
	{"drive forward 2", "", ""}, // 2 what?
}

func matcherRegistry(t testing.TB) (*tools.Registry, []tools.Spec) {
	t.Helper()
	reg, err := tools.NewRegistry(tools.Options{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range robotTools {
		if err := reg.Register("robot", tools.Func(s, func(context.Context, json.RawMessage) (tools.Result, error) {
			return tools.Result{}, nil
		})); err != nil {
			t.Fatal(err)
		}
	}
	return reg, reg.List()
}

func TestLocalMatcher(t *testing.T) {
	reg, specs := matcherRegistry(t)
	for _, c := range matcherCommands {
		m := matchCommand(c.text, specs, reg.Validate)
		switch {
		case c.tool == "" && len(m.steps) > 0:
			t.Errorf("%q: should decline, matched %s %s", c.text, m.steps[0].Tool, m.steps[0].Params)
		case c.tool == "" && m.decline == "":
			t.Errorf("%q: declined without a reason", c.text)
		case c.tool != "" && len(m.steps) != 1:
			t.Errorf("%q: want %s, declined: %s", c.text, c.tool, m.decline)
		case c.tool != "" && (m.steps[0].Tool != c.tool || string(m.steps[0].Params) != c.params):
			t.Errorf("%q: got %s %s, want %s %s", c.text, m.steps[0].Tool, m.steps[0].Params, c.tool, c.params)
		}
	}
}

func TestBareStopCallsEveryStop(t *testing.T) {
	specs := append([]tools.Spec{}, robotTools...)
	specs = append(specs, tools.Spec{Name: "arm.stop", Description: "Stop the arm.", Permission: "actuate"},
		tools.Spec{Name: "tilt.stop", Description: "Stop the tilt servo at an angle.", Permission: "actuate",
			Params: json.RawMessage(`{"type":"object","properties":{"angle":{"type":"number"}},"required":["angle"]}`)})
	reg, err := tools.NewRegistry(tools.Options{Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		_ = reg.Register("x", tools.Func(s, func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Result{}, nil }))
	}
	m := matchCommand("stop", reg.List(), reg.Validate)
	var got []string
	for _, s := range m.steps {
		got = append(got, s.Tool)
	}
	// tilt.stop needs an angle the command does not give: left out.
	if strings.Join(got, ",") != "arm.stop,drive.stop,pan.stop" || CheckPlan(m.steps) != nil {
		t.Fatalf("%v (%s)", got, m.decline)
	}
	// Two devices named: the matcher will not guess which.
	if m := matchCommand("stop the arm drive", reg.List(), reg.Validate); len(m.steps) != 0 {
		t.Fatalf("matched %v", m.steps)
	}
}

// The longer device name wins when one contains another.
func TestMatcherPrefersLongerDeviceName(t *testing.T) {
	specs := []tools.Spec{
		{Name: "light.set", Description: "Room light.", Params: json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`)},
		{Name: "front_light.set", Description: "Front light.", Params: json.RawMessage(`{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`)},
	}
	reg, _ := tools.NewRegistry(tools.Options{Log: quiet})
	for _, s := range specs {
		_ = reg.Register("x", tools.Func(s, func(context.Context, json.RawMessage) (tools.Result, error) { return tools.Result{}, nil }))
	}
	m := matchCommand("turn the front light on", reg.List(), reg.Validate)
	if len(m.steps) != 1 || m.steps[0].Tool != "front_light.set" {
		t.Fatalf("%+v %s", m.steps, m.decline)
	}
	m = matchCommand("light off", reg.List(), reg.Validate)
	if len(m.steps) != 1 || m.steps[0].Tool != "light.set" || string(m.steps[0].Params) != `{"on":false}` {
		t.Fatalf("%+v %s", m.steps, m.decline)
	}
}

// BenchmarkLocalMatcherShare reports the share of the scripted command set
// the matcher answers (zero LLM calls) and checks it answers only right.
func BenchmarkLocalMatcherShare(b *testing.B) {
	reg, specs := matcherRegistry(b)
	plain := 0
	for _, c := range matcherCommands {
		if c.tool != "" {
			plain++
		}
	}
	b.ReportAllocs()
	var handled, wrong int
	for b.Loop() {
		handled, wrong = 0, 0
		for _, c := range matcherCommands {
			m := matchCommand(c.text, specs, reg.Validate)
			if len(m.steps) == 0 {
				continue
			}
			handled++
			if m.steps[0].Tool != c.tool || string(m.steps[0].Params) != c.params {
				wrong++
			}
		}
	}
	if wrong > 0 {
		b.Fatalf("%d wrong matches", wrong)
	}
	b.ReportMetric(float64(handled)/float64(len(matcherCommands)), "share_local")
	b.ReportMetric(float64(handled)/float64(plain), "share_of_plain")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(matcherCommands)), "ns/command")
}
