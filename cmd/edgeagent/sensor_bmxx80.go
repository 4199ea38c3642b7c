package main

import _ "github.com/edgeagent/edgeagent/sensors/i2c/bmxx80" // bme280, bmp280
