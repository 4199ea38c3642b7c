package main

import _ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm" // pwm
