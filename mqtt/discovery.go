package mqtt

import (
	"bytes"
	"encoding/json"
	"runtime/debug"
	"strings"

	"github.com/edgeagent/edgeagent/tools"
)

// Home Assistant MQTT device discovery: one retained config per device on
// <discovery>/device/<id>/config listing its components ("cmps"), each with
// its platform ("p") and unique_id, sharing the device ("dev"), the origin
// ("o") and the availability (our status topic). See
// https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload.

// discoveryInput is what the payload is derived from.
type discoveryInput struct {
	Device   Device
	Topics   Topics
	QoS      int
	Entities []tools.Spec      // skills that carry an entity hint (Spec.Entity)
	Numeric  map[string]string // numeric world-model source -> unit
	Motion   map[string]bool   // sources of motion_start/motion_end
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
	for _, spec := range in.Entities {
		e := spec.Entity
		c := map[string]any{"name": e.Name, "cmd_t": t.Cmd, "stat_t": t.State + e.Name}
		switch e.Platform {
		case "switch":
			c["p"] = "switch"
			c["cmd_tpl"] = `{"id":"ha-` + e.Name + `","tool":"` + spec.Name + `","params":{"` + e.Param + `":{{ 'true' if value == 'ON' else 'false' }}}}`
			// The actuator reports its state as text starting with on/off.
			c["val_tpl"] = `{{ 'ON' if value | regex_search('^(on|true|1)\\b', ignorecase=True) else 'OFF' }}`
		case "number":
			c["p"] = "number"
			c["min"], c["max"], c["step"] = e.Min, e.Max, e.Step
			if e.Unit != "" {
				c["unit_of_meas"] = e.Unit
			}
			c["cmd_tpl"] = `{"id":"ha-` + e.Name + `","tool":"` + spec.Name + `","params":{"` + e.Param + `":{{ value }}}}`
			c["val_tpl"] = `{{ value | regex_findall_index('-?[0-9]+(?:\\.[0-9]+)?') }}`
		default:
			continue // a platform this transport does not announce
		}
		add(e.Name, c)
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
		Device: p.cfg.Device, Topics: p.topics, QoS: int(p.cfg.QoS), Entities: entitySpecs(p.d.Tools.List()),
		Numeric: rs.numeric, Motion: rs.motion,
	})
	if err != nil {
		p.log.Error("discovery payload", "err", err)
		return
	}
	rs.conn.publish(message{topic: p.topics.DiscoveryConfig, payload: data, qos: 1, retain: true})
}

// entitySpecs keeps the skills that carry an entity hint.
func entitySpecs(specs []tools.Spec) []tools.Spec {
	var out []tools.Spec
	for _, s := range specs {
		if s.Entity != nil && !s.Internal {
			out = append(out, s)
		}
	}
	return out
}

// motionSensor reports whether a board sensor kind detects motion (its
// binary sensor is announced before its first event).
func motionSensor(kind string) bool {
	return strings.Contains(kind, "camera") || strings.Contains(kind, "pir") || strings.Contains(kind, "motion")
}
