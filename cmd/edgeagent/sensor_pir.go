package main

import _ "github.com/edgeagent/edgeagent/sensors/gpio/pir" // pir
