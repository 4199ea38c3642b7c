package main

import _ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches" // led, relay, digital, buzzer
