package main

import _ "github.com/edgeagent/edgeagent/sensors/i2c/ina219" // ina219
