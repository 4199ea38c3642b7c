package main

import _ "github.com/edgeagent/edgeagent/sensors/i2c/scd4x" // scd4x
