package main

// The I2C and GPIO sensor kinds register themselves with the sensors
// registry from their init; importing them here is all it takes for a
// board file to use them.
import (
	_ "github.com/edgeagent/edgeagent/sensors/gpio/button" // button, estop
	_ "github.com/edgeagent/edgeagent/sensors/gpio/hcsr04" // hcsr04
	_ "github.com/edgeagent/edgeagent/sensors/gpio/pir"    // pir
	_ "github.com/edgeagent/edgeagent/sensors/i2c/ads1x15" // ads1115, ads1015
	_ "github.com/edgeagent/edgeagent/sensors/i2c/bh1750"  // bh1750
	_ "github.com/edgeagent/edgeagent/sensors/i2c/bmxx80"  // bme280, bmp280
	_ "github.com/edgeagent/edgeagent/sensors/i2c/generic" // generic
	_ "github.com/edgeagent/edgeagent/sensors/i2c/ina219"  // ina219
	_ "github.com/edgeagent/edgeagent/sensors/i2c/mpu9250" // mpu9250
	_ "github.com/edgeagent/edgeagent/sensors/i2c/scd4x"   // scd4x
)
