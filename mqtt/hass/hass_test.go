package hass

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"

	"github.com/edgeagent/edgeagent/tools"
)

func topics(prefix string) Topics {
	return Topics{Cmd: prefix + "cmd", Estop: prefix + "estop", Status: prefix + "status", State: prefix + "state/", Telemetry: prefix + "telemetry/"}
}

// TestPayloadGolden: the payload is byte for byte what Home Assistant has
// been getting (testdata written before discovery left package mqtt):
// every platform, device class and key rule, the skills without an entity
// or internal ones left out, a platform not announced skipped.
func TestPayloadGolden(t *testing.T) {
	specs := []tools.Spec{
		{Name: "headlight.set", Entity: &tools.Entity{Platform: "switch", Name: "headlight", Param: "on"}},
		{Name: "pan.set_angle", Entity: &tools.Entity{Platform: "number", Name: "pan", Param: "degrees", Min: 10, Max: 170, Step: 1, Unit: "°"}},
		{Name: "fan.set", Entity: &tools.Entity{Platform: "number", Name: "fan", Param: "speed", Min: 0, Max: 1, Step: 0.1}},
		{Name: "mode.set", Entity: &tools.Entity{Platform: "select", Name: "mode", Param: "m"}},
		{Name: "secret.set", Internal: true, Entity: &tools.Entity{Platform: "switch", Name: "secret", Param: "on"}},
		{Name: "plain.tool"},
	}
	for _, c := range []struct {
		file string
		in   Input
	}{
		{"full.json", Input{Device: Device{ID: "bot-1", Platform: "rpi4", Model: "Pi 4B"}, Version: "dev", Topics: topics("edgeagent/bot-1/"), QoS: 1,
			Tools: specs,
			Numeric: map[string]string{"env.temperature": "°C", "env.humidity": "%", "power.battery": "%", "power.level": "%", "env.pressure": "hPa",
				"count": "1", "light": "lx", "Odd Name.x": "", "power.volts": "mV", "power.amps": "A", "power.watts": "W", "cpu.temp": "K"},
			Motion: map[string]bool{"front_cam": true, "Back-PIR": true}}},
		{"bare.json", Input{Device: Device{ID: "sim", Name: "Sim <bot>", Platform: "sim"}, Version: "dev", Topics: topics("x/sim/")}},
	} {
		got, err := Payload(c.in)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: payload changed:\n got %s\nwant %s", c.file, got, want)
		}
		if !json.Valid(got) {
			t.Errorf("%s: not JSON", c.file)
		}
	}
}

func TestMotionKind(t *testing.T) {
	for kind, want := range map[string]bool{"camera": true, "pir": true, "motion_sensor": true, "bme280": false, "mic": false} {
		if MotionKind(kind) != want {
			t.Errorf("MotionKind(%q) = %v", kind, !want)
		}
	}
}
