// Package toolstest helps tests and benchmarks of tools: specs for a
// registry of realistic size without the robot that would provide it, and
// calls made as a remote command makes them.
package toolstest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/edgeagent/edgeagent/tools"
)

// Synthetic makes n plausible skills: relays, servos, sensors and pulsed
// outputs of a few dozen made-up things ("valve0.set", "fan5.set_angle"),
// each name unique, with real parameter schemas. The specs are the same on
// every call, so prompt sizes measured with them can be compared.
func Synthetic(n int) []tools.Spec {
	kinds := []struct{ fn, desc, params string }{
		{"set", "Switch the %s relay on or off.", `{"type":"object","properties":{"on":{"type":"boolean"}},"required":["on"]}`},
		{"set_angle", "Turn the %s servo to an angle in degrees.", `{"type":"object","properties":{"degrees":{"type":"number","minimum":0,"maximum":180}},"required":["degrees"]}`},
		{"read", "Read the %s sensor now and report the value.", `{"type":"object","properties":{}}`},
		{"pulse", "Pulse the %s output for a number of milliseconds.", `{"type":"object","properties":{"ms":{"type":"integer","minimum":1,"maximum":5000}},"required":["ms"]}`},
	}
	things := []string{"valve", "fan", "heater", "door", "gate", "arm", "claw", "mast", "winch", "sprinkler", "siren", "beacon", "lid", "hatch", "feeder"}
	out := make([]tools.Spec, n)
	for i := range out {
		k := kinds[i%len(kinds)]
		thing := things[(i/len(kinds))%len(things)]
		out[i] = tools.Spec{Name: fmt.Sprintf("%s%d.%s", thing, i, k.fn), Description: fmt.Sprintf(k.desc, thing),
			Permission: "actuate", Params: json.RawMessage(k.params), Scenarios: []string{"maintenance"}}
	}
	return out
}

// Invoke calls tool on reg with params (JSON) as the mqtt caller (the
// permissions of a remote command) and fails t when the call fails.
func Invoke(t testing.TB, reg *tools.Registry, tool, params string) tools.Result {
	t.Helper()
	res, err := reg.Invoke(context.Background(), tools.Call{Caller: "mqtt", Tool: tool, Params: json.RawMessage(params)})
	if err != nil {
		t.Fatalf("%s %s: %v", tool, params, err)
	}
	return res
}
