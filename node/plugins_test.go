package node

import (
	"github.com/edgeagent/edgeagent/tools/actuator"

	// The node's tests run the compiled-in plugins, as cmd/edgeagent does.
	_ "github.com/edgeagent/edgeagent/plugin/actuators"
	_ "github.com/edgeagent/edgeagent/plugin/engine"
	_ "github.com/edgeagent/edgeagent/plugin/mqttplane"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
)

// actuatorSet is the actuators plugin's set (nil when not loaded).
func actuatorSet(n *Node) *actuator.Set {
	if p, ok := Find[interface{ Set() *actuator.Set }](n); ok {
		return p.Set()
	}
	return nil
}
