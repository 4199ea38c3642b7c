package main

import _ "github.com/edgeagent/edgeagent/plugin/actuators" // actuator skills, e-stop, audit
