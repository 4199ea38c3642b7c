package main

import _ "github.com/edgeagent/edgeagent/sensors/i2c/bh1750" // bh1750
