package main

import _ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo" // servo, pca9685_servo
