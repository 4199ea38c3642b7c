package main

import _ "github.com/edgeagent/edgeagent/sensors/i2c/ads1x15" // ads1115, ads1015
