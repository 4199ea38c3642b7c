package mpu9250_test

import (
	"math"
	"testing"
	"time"

	_ "github.com/edgeagent/edgeagent/sensors/i2c/mpu9250"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

func TestIMUOnSimBoard(t *testing.T) {
	t.Parallel()
	rec := sensortest.RunSim(t, `
- name: imu
  kind: mpu9250
  bus: "71"
  interval: 10ms
  options:
    accel_range: 8
    gyro_range: 2000
    sim:
      accel: {x: {base: 0.25}, y: {base: -0.5}, z: {base: 0.97}}
      gyro: {x: {base: 12.5}, y: {base: -1500}, z: {base: 0}}
      temperature: {base: 38.2}
`)
	rec.WaitFor(t, 3*time.Second, "samples", func() bool { return len(rec.Values("imu.temperature")) >= 3 })
	const g = 9.80665
	for src, w := range map[string]struct {
		v, tol float64
		unit   string
	}{
		// 8 g range: 4096 LSB/g; 2000 °/s: 16.4 LSB/(°/s).
		"imu.accel_x":     {0.25 * g, g / 4096, "m/s²"},
		"imu.accel_y":     {-0.5 * g, g / 4096, "m/s²"},
		"imu.accel_z":     {0.97 * g, g / 4096, "m/s²"},
		"imu.gyro_x":      {12.5, 1 / 16.4, "°/s"},
		"imu.gyro_y":      {-1500, 1 / 16.4, "°/s"},
		"imu.gyro_z":      {0, 1 / 16.4, "°/s"},
		"imu.temperature": {38.2, 0.01, "°C"},
	} {
		for _, o := range rec.Observations(src) {
			if math.Abs(o.Value-w.v) > w.tol || o.Unit != w.unit {
				t.Errorf("%s = %v %s, want %v ± %.3g %s", src, o.Value, o.Unit, w.v, w.tol, w.unit)
			}
		}
	}
}

func TestOptionErrors(t *testing.T) {
	sensortest.Refused(t, "sim", []sensortest.Refusal{
		{`- {name: i, kind: mpu9250, options: {accel_range: 3}}`, "options.accel_range: not 2, 4, 8 or 16"},
		{`- {name: i, kind: mpu9250, options: {gyro_range: 300}}`, "options.gyro_range: not 250, 500, 1000 or 2000"},
		{`- {name: i, kind: mpu9250, address: 0x6a}`, "0x68 or 0x69"},
		{`- {name: i, kind: mpu9250, options: {sim: {accel: {w: {base: 1}}}}}`, "options.sim.accel.w: unknown key"},
	})
}
