package board

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"
)

// Defaults live here, in one place, and are written into the Config rather
// than applied by each consumer, so `edgeagent check --print` shows the
// values that actually run and docs/config.md can be checked against them.

// Default values that other packages may want to name are not exported: a
// consumer reads the filled Config instead.
const (
	defaultListen     = "127.0.0.1:1883"
	defaultTelemetry  = 10 * time.Second
	defaultPermission = "actuate"
)

func defaultConfig() *Config {
	return &Config{
		Log: Log{Level: "info", Format: "text"},
		MQTT: MQTT{
			Broker:       "embedded",
			QoS:          1,
			KeepAlive:    30 * time.Second,
			Buffer:       1000,
			Discovery:    Discovery{Enabled: true, Prefix: "homeassistant"},
			PublishAllow: []string{},
		},
		LLM: LLM{
			Enabled:       true,
			Model:         "qwen2.5:1.5b",
			EmbedModel:    "all-minilm",
			NumCtx:        4096,
			Seed:          42,
			KeepAlive:     -time.Second,
			Timeout:       30 * time.Second,
			Scenarios:     []string{"security", "navigation", "environment", "interaction", "maintenance", "idle"},
			Weights:       Weights{Semantic: 0.4, History: 0.3, Permission: 0.2, Context: 0.1},
			TopK:          5,
			MinSimilarity: 0.2,
			PlanBelow:     0.8,
			SummaryBytes:  2048,
		},
		Agent: Agent{Heartbeat: 10 * time.Second, Queue: 64, CycleTimeout: 30 * time.Second, GCPercent: 100},
		World: World{DefaultCapacity: 256, Horizon: 10 * time.Minute, MaxSources: 512, Events: 1024, SummaryEvents: 10},
		Permissions: Permissions{
			CLI:    []string{"*"},
			MQTT:   []string{"read", "actuate", "publish"},
			LLM:    []string{"read", "actuate", "publish"},
			Reflex: []string{"read", "actuate"},
			Motive: []string{"read", "actuate"},
		},
	}
}

func reflectValue(c *Config) reflect.Value { return reflect.ValueOf(c).Elem() }

// defaulter is implemented by list elements whose zero value is not the
// default (a sensor is enabled unless it says otherwise). The decoder calls
// it on each new element before decoding into it.
type defaulter interface{ setDefaults() }

func setElemDefaults(v reflect.Value) {
	if v.CanAddr() {
		if d, ok := v.Addr().Interface().(defaulter); ok {
			d.setDefaults()
		}
	}
}

func (s *Sensor) setDefaults() {
	s.Enabled = true
	s.Telemetry = defaultTelemetry
}

func (t *Threshold) setDefaults() {
	t.Priority = "high"
	t.Event = "threshold"
}

func (a *Actuator) setDefaults() {
	a.Permission = defaultPermission
}

// fillDefaults sets the defaults that depend on other values (the device id,
// the platform, the file's location).
func (v *validator) fillDefaults() {
	c := v.c
	id := c.Device.ID
	if c.Device.Name == "" {
		c.Device.Name = id
	}
	v.hdr, v.hasHdr = headers[c.Device.Model]
	if v.hasHdr && v.hdr.platform != c.Device.Platform {
		v.hasHdr = false // reported by validate
	}

	// data_dir: $XDG_STATE_HOME (default $HOME/.local/state)/edgeagent/<id>.
	switch dd := c.DataDir; {
	case dd == "":
		state := os.Getenv("XDG_STATE_HOME")
		if state == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				v.fail("data_dir", "no default: $HOME is not set; set data_dir")
				break
			}
			state = filepath.Join(home, ".local", "state")
		}
		c.DataDir = filepath.Join(state, "edgeagent", id)
	default:
		c.DataDir = v.resolvePath("data_dir", dd)
	}

	m := &c.MQTT
	if m.Broker == "embedded" && m.Listen == "" {
		m.Listen = defaultListen
	}
	if m.Prefix == "" {
		m.Prefix = "edgeagent/" + id + "/"
	}
	if m.ClientID == "" {
		m.ClientID = "edgeagent-" + id
	}
	if m.PasswordFile != "" {
		m.PasswordFile = v.resolvePath("mqtt.password_file", m.PasswordFile)
	}
	if m.TLS.CA != "" {
		m.TLS.CA = v.resolvePath("mqtt.tls.ca", m.TLS.CA)
	}
	if m.TLS.Cert != "" {
		m.TLS.Cert = v.resolvePath("mqtt.tls.cert", m.TLS.Cert)
	}
	if m.TLS.Key != "" {
		m.TLS.Key = v.resolvePath("mqtt.tls.key", m.TLS.Key)
	}
	// Print empty lists as [] rather than null.
	if m.PublishAllow == nil {
		m.PublishAllow = []string{}
	}
	if c.LLM.Scenarios == nil {
		c.LLM.Scenarios = []string{}
	}
	for _, g := range []*[]string{&c.Permissions.CLI, &c.Permissions.MQTT, &c.Permissions.LLM, &c.Permissions.Reflex, &c.Permissions.Motive} {
		if *g == nil {
			*g = []string{}
		}
	}
	if c.Sensors == nil {
		c.Sensors = []Sensor{}
	}
	if c.Actuators == nil {
		c.Actuators = []Actuator{}
	}
	if c.Reflexes == nil {
		c.Reflexes = []Reflex{}
	}

	for i := range c.Sensors {
		s := &c.Sensors[i]
		if s.Address != 0 && s.Bus == "" {
			s.Bus = v.defaultBus()
		}
	}
	for i := range c.Actuators {
		a := &c.Actuators[i]
		k, ok := v.actuatorKind(a.Kind)
		if !ok {
			continue // reported by validate when kinds are known
		}
		if k.I2C {
			if a.Address == 0 {
				a.Address = k.Address
			}
			if a.Bus == "" {
				a.Bus = v.defaultBus()
			}
		}
	}
	for i := range c.Reflexes {
		if len(c.Reflexes[i].Do.Params) == 0 {
			c.Reflexes[i].Do.Params = json.RawMessage("{}")
		}
	}
}

// defaultBus is the bus on the header's pins 3/5, which is where every
// breakout board tutorial wires SDA/SCL.
func (v *validator) defaultBus() string {
	switch {
	case v.c.Device.Platform == "sim":
		return simBus
	case v.hasHdr:
		return v.hdr.defaultBus
	}
	return ""
}

// resolvePath makes a path from the board file absolute: "~/" is the home
// directory, and relative paths are relative to the board file's directory,
// so a board file and its certificates can move together.
func (v *validator) resolvePath(key, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok || p == "~" {
		home, err := os.UserHomeDir()
		if err != nil {
			v.fail(key, "cannot expand ~: $HOME is not set")
			return p
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(v.file), p)
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}
