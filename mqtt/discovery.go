package mqtt

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"

	"github.com/edgeagent/edgeagent/board"
)

// Home Assistant MQTT device discovery: one retained config per device on
// <discovery>/device/<id>/config listing its components ("cmps"), each with
// its platform ("p") and unique_id, sharing the device ("dev"), the origin
// ("o") and the availability (our status topic). See
// https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload.

// discoveryInput is what the payload is derived from.
type discoveryInput struct {
	Device    board.Device
	Topics    Topics
	QoS       int
	Actuators []board.Actuator
	HasTool   func(name string) bool // entities only for tools that exist
	Numeric   map[string]string      // numeric world-model source -> unit
	Motion    map[string]bool        // sources of motion_start/motion_end
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// discoveryPayload builds the device discovery config. It is deterministic
// (components keyed and encoded in sorted order): announcing an unchanged
// robot again (on every connect, when Home Assistant comes online) repeats
// the same retained config.
func discoveryPayload(in discoveryInput) ([]byte, error) {
	t := in.Topics
	id := in.Device.ID
	cmps := map[string]map[string]any{}
	add := func(key string, c map[string]any) {
		c["unique_id"] = id + "_" + key
		cmps[key] = c
	}
	for _, a := range in.Actuators {
		switch a.Kind {
		case "led", "relay", "digital":
			tool := a.Name + ".set"
			if !in.HasTool(tool) {
				continue
			}
			add(a.Name, map[string]any{
				"p": "switch", "name": a.Name,
				"cmd_t":   t.Cmd,
				"cmd_tpl": `{"id":"ha-` + a.Name + `","tool":"` + tool + `","params":{"on":{{ 'true' if value == 'ON' else 'false' }}}}`,
				"stat_t":  t.State + a.Name,
				// The actuator reports its state as text starting with on/off.
				"val_tpl": `{{ 'ON' if value | regex_search('^(on|true|1)\\b', ignorecase=True) else 'OFF' }}`,
			})
		case "servo", "pca9685_servo":
			tool := a.Name + ".set_angle"
			if !in.HasTool(tool) {
				continue
			}
			lo, hi := 0.0, 180.0
			if a.Limits.MinAngle != nil {
				lo = *a.Limits.MinAngle
			}
			if a.Limits.MaxAngle != nil {
				hi = *a.Limits.MaxAngle
			}
			add(a.Name, map[string]any{
				"p": "number", "name": a.Name, "min": lo, "max": hi, "step": 1, "unit_of_meas": "°",
				"cmd_t":   t.Cmd,
				"cmd_tpl": `{"id":"ha-` + a.Name + `","tool":"` + tool + `","params":{"degrees":{{ value }}}}`,
				"stat_t":  t.State + a.Name,
				"val_tpl": `{{ value | regex_findall_index('-?[0-9]+(?:\\.[0-9]+)?') }}`,
			})
		}
	}
	add("estop", map[string]any{
		"p": "button", "name": "Emergency stop", "icon": "mdi:alert-octagon",
		"cmd_t": t.Estop, "pl_prs": "PRESS",
	})
	for src := range in.Motion {
		key := entityKey(src) + "_motion"
		add(key, map[string]any{
			"p": "binary_sensor", "name": src + " motion", "dev_cla": "motion",
			"stat_t": t.State + src + "/motion", "pl_on": "ON", "pl_off": "OFF",
		})
	}
	for src, unit := range in.Numeric {
		sensor, quantity, _ := strings.Cut(src, ".")
		c := map[string]any{
			"p": "sensor", "name": src, "stat_cla": "measurement",
			"stat_t":  t.Telemetry + sensor,
			"val_tpl": "{{ value_json['" + quantity + "'] }}",
		}
		if unit != "" && unit != "1" {
			c["unit_of_meas"] = unit
		}
		if dc := deviceClass(quantity, unit); dc != "" {
			c["dev_cla"] = dc
		}
		add(entityKey(src), c)
	}
	name := in.Device.Name
	if name == "" {
		name = id
	}
	mdl := in.Device.Platform
	if in.Device.Model != "" {
		mdl = in.Device.Model
	}
	payload := map[string]any{
		"dev": map[string]any{"ids": []string{"edgeagent_" + id}, "name": name, "mf": "edgeagent", "mdl": mdl, "sw": version()},
		"o":   map[string]any{"name": "edgeagent", "sw": version(), "url": "https://github.com/edgeagent/edgeagent"},
		// "stopped" (a clean shutdown) is unavailable too.
		"avty": []map[string]any{{"t": t.Status, "val_tpl": "{{ 'online' if value == 'online' else 'offline' }}"}},
		"cmps": cmps,
		"qos":  in.QoS,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // templates contain < and >; HA reads them verbatim either way, people read them too
	if err := enc.Encode(payload); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}

// entityKey makes a component key (and unique_id suffix) from a source.
func entityKey(src string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, src)
}

// deviceClass picks Home Assistant's device class where unit (and for
// percentages, the quantity's name) leave no doubt.
func deviceClass(quantity, unit string) string {
	switch unit {
	case "°C", "°F", "K":
		return "temperature"
	case "hPa", "Pa", "kPa", "mbar", "bar":
		return "pressure"
	case "lx":
		return "illuminance"
	case "V", "mV":
		return "voltage"
	case "A", "mA":
		return "current"
	case "W":
		return "power"
	case "%":
		switch {
		case strings.Contains(quantity, "humid"):
			return "humidity"
		case strings.Contains(quantity, "batt"):
			return "battery"
		}
	}
	return ""
}

// publishDiscovery announces the device to Home Assistant, unless discovery
// is off or was withdrawn on request. It runs on connect, when Home
// Assistant comes online, and when the set of entities changes.
func (p *Plane) publishDiscovery(rs *runState) {
	if p.topics.Discovery == "" {
		return
	}
	rs.discMu.Lock()
	defer rs.discMu.Unlock()
	if rs.discRemoved {
		return
	}
	data, err := discoveryPayload(discoveryInput{
		Device: p.cfg.Device, Topics: p.topics, QoS: int(p.cfg.QoS), Actuators: p.cfg.Actuators,
		HasTool: func(name string) bool { _, err := p.d.Tools.Resolve(name); return err == nil },
		Numeric: rs.numeric, Motion: rs.motion,
	})
	if err != nil {
		p.log.Error("discovery payload", "err", err)
		return
	}
	rs.conn.publish(message{topic: p.topics.DiscoveryConfig, payload: data, qos: 1, retain: true})
}

// motionSensor reports whether a board sensor kind detects motion (its
// binary sensor is announced before its first event).
func motionSensor(kind string) bool {
	return strings.Contains(kind, "camera") || strings.Contains(kind, "pir") || strings.Contains(kind, "motion")
}
