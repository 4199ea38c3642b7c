package main

import _ "github.com/edgeagent/edgeagent/sensors/gpio/hcsr04" // hcsr04
