package main

import _ "github.com/edgeagent/edgeagent/sensors/i2c/generic" // generic (any I2C register map)
