// Package kinds registers every built-in actuator kind: importing it is the
// one line that makes them available to a board file. A new kind is a
// folder beside these and one import line here (docs/add-an-actuator.md).
package kinds

import (
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"    // motor
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"      // pwm
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"    // servo, pca9685_servo
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches" // led, relay, digital, buzzer
)
