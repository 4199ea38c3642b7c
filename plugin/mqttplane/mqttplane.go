// Package mqttplane makes the MQTT control plane a plugin. `plugins: {mqtt:
// {enabled: false}}` in a board file runs the agent without it.
package mqttplane

import (
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/plugin"
)

func init() {
	plugin.Register("mqtt", func(h plugin.Host) (hooks.Plugin, error) {
		return mqtt.New(mqtt.Deps{
			Board: h.Board(), World: h.World(), Tools: h.Tools(), Agent: h.Agent(),
			Host: h, Store: h.Store(), Log: h.Log(),
		})
	})
}
