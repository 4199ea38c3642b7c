package main

import _ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor" // motor
