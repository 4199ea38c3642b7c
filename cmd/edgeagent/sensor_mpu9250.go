package main

import _ "github.com/edgeagent/edgeagent/sensors/i2c/mpu9250" // mpu9250
