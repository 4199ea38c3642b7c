package mqttplane

import (
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
)

func TestConfigFromBoard(t *testing.T) {
	b, err := board.Parse("t.yaml", []byte(`
device: {id: cfg-bot, platform: sim}
agent: {cycle_timeout: 7s}
mqtt:
  listen: 127.0.0.1:0
  local_admin: true
  discovery: {enabled: false}
sensors:
  - {name: env, kind: bme280, address: 0x76, telemetry: 2s}
  - {name: off, kind: bme280, address: 0x77, enabled: false}
plugins:
  mqtt: {queue: 5, dedup_window: 200}
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Config(b)
	if err != nil {
		t.Fatal(err)
	}
	o := c.Options
	switch {
	case c.DeviceID != "cfg-bot" || c.Prefix != "edgeagent/cfg-bot/" || c.Broker != "embedded" || !c.LocalAdmin:
		t.Errorf("mqtt section: %+v", c)
	case c.Discovery != "":
		t.Errorf("discovery disabled but prefix %q", c.Discovery)
	case o.CommandTimeout != 7*time.Second:
		t.Errorf("command_timeout %v, want agent.cycle_timeout", o.CommandTimeout)
	case o.Queue != 5 || o.DedupWindow != 200 || o.MaxInflight != 32:
		t.Errorf("options %+v", o)
	case len(c.Sensors) != 1 || c.Sensors[0].Name != "env" || c.Sensors[0].Telemetry != 2*time.Second:
		t.Errorf("sensors %+v", c.Sensors)
	}
	b.Plugins["mqtt"] = board.Options{} // decoded from nothing: defaults
	b.Agent.CycleTimeout = 0
	if c, _ := Config(b); c.Options.CommandTimeout != 30*time.Second {
		t.Errorf("default command timeout %v", c.Options.CommandTimeout)
	}
}
