package admin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/tools"
)

// marked is a board file with a marker in place of every value a
// validation checks: device, MQTT, LLM, agent, world, sensors, thresholds,
// actuators, reflexes, fleet, permissions.
const marked = `device: {id: ZQX Marker, platform: zqxmarker, model: zqxmarker}
log: {level: zqxmarker, format: zqxmarker}
mqtt: {broker: "zqxmarker:1", listen: zqxmarker, qos: 987654321, prefix: zqxmarker, publish_allow: ["zqx/#/marker"], users: [{username: zqxmarker}, {username: zqxmarker}]}
llm: {host: "zqx marker://", temperature: 987654321, scenarios: [ZQXMarker, ZQXMarker], min_similarity: 987654321, plan_below: 987654321, summary_bytes: 9876, weights: {semantic: 987654321}}
agent: {heartbeat: 987654321, queue: 987654321987654321987654321, gc_percent: 987654321, goals: [{name: ZQXMarker, source: a.b, text: x}]}
world: {summary_events: 987654321}
permissions: {cli: [ZQX-Marker]}
fleet: {name: ZQXMarker, groups: [ZQX/marker, ZQX/marker], tools: [zqx-marker]}
sensors:
  - {name: ZQXMarker, kind: pir, interval: 987654321, priority: zqxmarker, pins: {signal: "zqxmarker"},
     thresholds: [{quantity: q, above: 1, priority: zqxmarker, event: ZQXMarker}]}
  - {name: zqxmarker, kind: bme280, bus: zqxmarker, address: 987654321}
actuators:
  - {name: ZQXMarker, kind: zqxmarker, channel: 987654321, permission: ZQX-Marker, scenarios: [zqxmarker], pins: {pin: zqxmarker}}
reflexes:
  - {on: "zqx marker", do: {tool: ZQX marker}, cooldown: 987654321}
`

// TestReloadErrorsNeverQuoteValues: config.reload's refusal reaches whoever
// sent it (MQTT, the dashboard, the socket); it names keys and positions,
// never a value from the file, by yaml or by path.
func TestReloadErrorsNeverQuoteValues(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "marked.yaml"), []byte(marked), 0o600); err != nil {
		t.Fatal(err)
	}
	r := registry(t, Config{Plugins: noPlugins{}, Check: func(*board.Config, string) error { return nil }, Dir: dir, Reloads: make(chan Reload), Log: quiet})
	yaml, _ := json.Marshal(map[string]string{"yaml": marked})
	for _, params := range []string{string(yaml), `{"path":"marked.yaml"}`} {
		_, err := r.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "config.reload", Params: json.RawMessage(params)})
		if err == nil {
			t.Fatal("the marked board was accepted")
		}
		msg := err.Error()
		if n := strings.Count(msg, "\n"); n < 30 {
			t.Fatalf("only %d errors: the markers do not reach the validation:\n%s", n, msg)
		}
		low := strings.ToLower(strings.ReplaceAll(msg, ".", ""))
		for _, m := range []string{"zqx", "98765"} {
			if strings.Contains(low, m) {
				t.Errorf("the refusal quotes the file (%s):\n%s", m, msg)
			}
		}
	}
}
