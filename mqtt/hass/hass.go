// Package hass is Home Assistant's MQTT device discovery for the control
// plane: one retained config per robot on <discovery>/device/<id>/config
// listing its components ("cmps"), each with its platform ("p") and
// unique_id, sharing the device ("dev"), the origin ("o") and the
// availability (the robot's status topic). See
// https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload.
//
// The package only words the payload; when to announce it (on connect,
// when Home Assistant comes online, when entities appear) is the plane's.
package hass

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/edgeagent/edgeagent/tools"
)

// Device is what Home Assistant (and fleet listings) show of the robot.
type Device struct {
	ID, Name, Platform, Model string
}

// Topics are the robot's topics its components point at.
type Topics struct {
	Cmd, Estop, Status string
	// State and Telemetry are prefixes: state/<name>, telemetry/<sensor>.
	State, Telemetry string
}

// Input is what the payload is derived from.
type Input struct {
	Device Device
	// Version is the robot's software version ("sw").
	Version string
	Topics  Topics
	QoS     int
	// Tools are the registry's specs: the skills among them that carry an
	// entity hint (tools.Spec.Entity) become switches and numbers.
	Tools   []tools.Spec
	Numeric map[string]string // numeric world-model source -> unit
	Motion  map[string]bool   // sources of motion_start/motion_end
}

// Payload builds the device discovery config. It is deterministic
// (components keyed and encoded in sorted order): announcing an unchanged
// robot again (on every connect, when Home Assistant comes online) repeats
// the same retained config.
func Payload(in Input) ([]byte, error) {
	t := in.Topics
	id := in.Device.ID
	cmps := map[string]map[string]any{}
	add := func(key string, c map[string]any) {
		c["unique_id"] = id + "_" + key
		cmps[key] = c
	}
	for _, spec := range in.Tools {
		if spec.Entity == nil || spec.Internal {
			continue
		}
		if c := entity(spec, t); c != nil {
			add(spec.Entity.Name, c)
		}
	}
	add("estop", map[string]any{
		"p": "button", "name": "Emergency stop", "icon": "mdi:alert-octagon",
		"cmd_t": t.Estop, "pl_prs": "PRESS",
	})
	for src := range in.Motion {
		add(entityKey(src)+"_motion", map[string]any{
			"p": "binary_sensor", "name": src + " motion", "dev_cla": "motion",
			"stat_t": t.State + src + "/motion", "pl_on": "ON", "pl_off": "OFF",
		})
	}
	for src, unit := range in.Numeric {
		add(entityKey(src), sensor(src, unit, t))
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
		"dev": map[string]any{"ids": []string{"edgeagent_" + id}, "name": name, "mf": "edgeagent", "mdl": mdl, "sw": in.Version},
		"o":   map[string]any{"name": "edgeagent", "sw": in.Version, "url": "https://github.com/edgeagent/edgeagent"},
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

// entity is the component of a skill's entity hint, nil for a platform
// this package does not announce.
func entity(spec tools.Spec, t Topics) map[string]any {
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
		return nil
	}
	return c
}

// sensor is the component of a numeric source <sensor>.<quantity>: a
// value of its sensor's telemetry.
func sensor(src, unit string, t Topics) map[string]any {
	name, quantity, _ := strings.Cut(src, ".")
	c := map[string]any{
		"p": "sensor", "name": src, "stat_cla": "measurement",
		"stat_t":  t.Telemetry + name,
		"val_tpl": "{{ value_json['" + quantity + "'] }}",
	}
	if unit != "" && unit != "1" {
		c["unit_of_meas"] = unit
	}
	if dc := deviceClass(quantity, unit); dc != "" {
		c["dev_cla"] = dc
	}
	return c
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

// MotionKind reports whether a board sensor kind detects motion: its
// binary sensor is announced before its first event.
func MotionKind(kind string) bool {
	return strings.Contains(kind, "camera") || strings.Contains(kind, "pir") || strings.Contains(kind, "motion")
}
