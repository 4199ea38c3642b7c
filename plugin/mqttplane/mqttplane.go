// Package mqttplane makes the MQTT control plane a plugin: it translates
// the board file into the plane's own Config, so the transport never reads
// the board. `plugins: {mqtt: {enabled: false}}` runs the agent without it.
package mqttplane

import (
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/mqtt/broker"
	"github.com/edgeagent/edgeagent/mqtt/hass"
	"github.com/edgeagent/edgeagent/plugin"
)

func init() {
	plugin.Register("mqtt", func(h plugin.Host) (hooks.Plugin, error) {
		cfg, err := Config(h.Board())
		if err != nil {
			return nil, err
		}
		return mqtt.New(cfg, mqtt.Deps{World: h.World(), Tools: h.Tools(), Agent: h.Agent(),
			Host: h, Store: h.Store(), Log: h.Log(), Clock: h.Clock()})
	})
}

// Config is the control plane's config for a board: its mqtt section, the
// plugin's options (plugins.mqtt; command_timeout defaults to
// agent.cycle_timeout) and what telemetry and discovery describe.
func Config(b *board.Config) (mqtt.Config, error) {
	opts := mqtt.DefaultOptions()
	opts.CommandTimeout = 0
	if err := b.Plugins["mqtt"].Decode(&opts); err != nil {
		return mqtt.Config{}, err
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = b.Agent.CycleTimeout
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = mqtt.DefaultOptions().CommandTimeout
	}
	m := b.MQTT
	c := mqtt.Config{
		DeviceID: b.Device.ID, Broker: m.Broker, Listen: m.Listen, Prefix: m.Prefix, ClientID: m.ClientID,
		Username: m.Username, Password: m.Password, PasswordFile: m.PasswordFile,
		TLS:        mqtt.TLS{CA: m.TLS.CA, Cert: m.TLS.Cert, Key: m.TLS.Key},
		LocalAdmin: m.LocalAdmin, QoS: byte(m.QoS), KeepAlive: m.KeepAlive, Buffer: m.Buffer,
		PublishAllow: m.PublishAllow, Options: opts,
		Device: hass.Device{ID: b.Device.ID, Name: b.Device.Name, Platform: b.Device.Platform, Model: b.Device.Model},
		Fleet:  mqtt.Fleet{Name: b.Fleet.Name, Groups: b.Fleet.Groups, Tools: b.Fleet.Tools},
	}
	if m.Discovery.Enabled {
		c.Discovery = m.Discovery.Prefix
	}
	for _, u := range m.Users {
		c.Users = append(c.Users, broker.User{Username: u.Username, PasswordBcrypt: u.PasswordBcrypt, Admin: u.Admin})
	}
	for _, s := range b.Sensors {
		if s.Enabled {
			c.Sensors = append(c.Sensors, mqtt.Sensor{Name: s.Name, Kind: s.Kind, Telemetry: s.Telemetry})
		}
	}
	return c, nil
}
