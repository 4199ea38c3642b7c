package eval

// The plugins register themselves from their packages; cmd/edgeagent
// imports them, and so do these tests.
import (
	_ "github.com/edgeagent/edgeagent/plugin/actuators"
	_ "github.com/edgeagent/edgeagent/plugin/engine"
	_ "github.com/edgeagent/edgeagent/plugin/mqttplane"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
)
