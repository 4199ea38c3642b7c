// Package mpu9250 is the "mpu9250" sensor kind: the accelerometer,
// gyroscope and die temperature of an InvenSense MPU-9250 IMU, read through
// periph.io's mpu9250 driver. Readings: <name>.accel_x/y/z (m/s²),
// <name>.gyro_x/y/z (°/s), <name>.temperature (°C, the die, a few degrees
// above ambient).
//
// Sample block:
//
//	sensors:
//	  - name: imu
//	    kind: mpu9250
//	    bus: "1"
//	    address: 0x68           # 0x69 when AD0 is high
//	    interval: 100ms
//	    thresholds:
//	      # tilt/fall detector: Z leaves 1 g
//	      - {quantity: accel_z, below: 7.0, hysteresis: 1.0, priority: high, event: tipped_over}
//	    options:
//	      accel_range: 4        # ±g: 2 | 4 | 8 | 16
//	      gyro_range: 500       # ±°/s: 250 | 500 | 1000 | 2000
//	      sim:
//	        accel: {z: {base: 1.0, noise: 0.01}}   # in g
//	        gyro: {z: {base: 0, amplitude: 30, period: 8s}}
//
// The magnetometer (AK8963 behind the MPU's I²C master) and the FIFO are
// not used: periph's driver does not support them over I²C.
package mpu9250

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/devices/v3/mpu9250"
	"periph.io/x/devices/v3/mpu9250/reg"
)

func init() { sensors.Register("mpu9250", New) }

// standardGravity converts g to m/s² (ISO 80000-3).
const standardGravity = 9.80665

// Opts is the options block.
type Opts struct {
	AccelRange int             `yaml:"accel_range"`
	GyroRange  int             `yaml:"gyro_range"`
	Retry      sensors.Backoff `yaml:"retry"`
	Sim        *Sim            `yaml:"sim"`
}

// Sim is the simulated motion.
type Sim struct {
	Accel       Axes                 `yaml:"accel"` // g
	Gyro        Axes                 `yaml:"gyro"`  // °/s
	Temperature *i2csim.Curve        `yaml:"temperature"`
	Faults      []i2csim.FaultWindow `yaml:"faults"`
}

// Axes are one curve per axis; an absent axis is 0.
type Axes struct {
	X i2csim.Curve `yaml:"x"`
	Y i2csim.Curve `yaml:"y"`
	Z i2csim.Curve `yaml:"z"`
}

// defaultSim: a robot standing level, turning slowly back and forth.
var defaultSim = Sim{
	Accel: Axes{X: i2csim.Curve{Noise: 0.004}, Y: i2csim.Curve{Noise: 0.004}, Z: i2csim.Curve{Base: 1, Noise: 0.004}},
	Gyro:  Axes{X: i2csim.Curve{Noise: 0.05}, Y: i2csim.Curve{Noise: 0.05}, Z: i2csim.Curve{Amplitude: 20, Period: 10 * time.Second, Noise: 0.05}},
}

var (
	// Gyro sensitivity per FS_SEL, LSB per °/s (datasheet table 1): not
	// exactly 32768/range.
	gyroSens = [4]float64{131, 65.5, 32.8, 16.4}
	accelSel = map[int]byte{2: 0, 4: 1, 8: 2, 16: 3}
	gyroSel  = map[int]byte{250: 0, 500: 1, 1000: 2, 2000: 3}
)

// New builds an mpu9250 sensor.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	opts := Opts{AccelRange: 4, GyroRange: 500}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	cfg.Address = i2ckit.Address(cfg, 0x68)
	var errs []error
	if cfg.Address != 0x68 && cfg.Address != 0x69 {
		errs = append(errs, fmt.Errorf("address %#x: an MPU-9250 answers at 0x68 or 0x69 only", cfg.Address))
	}
	as, ok := accelSel[opts.AccelRange]
	if !ok {
		errs = append(errs, errors.New("options.accel_range: not 2, 4, 8 or 16"))
	}
	gs, ok := gyroSel[opts.GyroRange]
	if !ok {
		errs = append(errs, errors.New("options.gyro_range: not 250, 500, 1000 or 2000"))
	}
	sim := defaultSim
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	temp := i2csim.Curve{Base: 31, Noise: 0.02}
	if sim.Temperature != nil {
		temp = *sim.Temperature
	}
	errs = append(errs, i2ckit.CheckSim(map[string]i2csim.Curve{
		"accel.x": sim.Accel.X, "accel.y": sim.Accel.Y, "accel.z": sim.Accel.Z,
		"gyro.x": sim.Gyro.X, "gyro.y": sim.Gyro.Y, "gyro.z": sim.Gyro.Z, "temperature": temp,
	}, sim.Faults)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	k := &kind{cfg: cfg, accelSel: as, gyroSel: gs,
		accelScale: float64(opts.AccelRange) / 32768 * standardGravity,
		gyroScale:  1 / gyroSens[gs],
	}
	for _, q := range []string{"accel_x", "accel_y", "accel_z", "gyro_x", "gyro_y", "gyro_z", "temperature"} {
		k.sources = append(k.sources, cfg.Name+"."+q)
	}
	return &i2ckit.Loop{
		Cfg: cfg, Interval: 100 * time.Millisecond, Min: 5 * time.Millisecond, Backoff: opts.Retry, Open: k.open,
		Sim: func() (i2csim.Device, []i2csim.FaultWindow, error) {
			return i2csim.NewMPU9250(i2csim.MPU9250Config{
				Accel:       [3]i2csim.Curve{sim.Accel.X, sim.Accel.Y, sim.Accel.Z},
				Gyro:        [3]i2csim.Curve{sim.Gyro.X, sim.Gyro.Y, sim.Gyro.Z},
				Temperature: temp,
			}), sim.Faults, nil
		},
	}, nil
}

type kind struct {
	cfg                   sensors.Config
	accelSel, gyroSel     byte
	accelScale, gyroScale float64
	sources               []string
}

func (k *kind) open(ctx context.Context, bus i2c.Bus) (i2ckit.Device, error) {
	tr, err := mpu9250.NewI2cTransport(bus, k.cfg.Address)
	if err != nil {
		return nil, err
	}
	m, err := mpu9250.New(*tr)
	if err != nil {
		return nil, err
	}
	// 0x71 is the MPU-9250, 0x73 the MPU-9255 (same registers).
	if id, err := m.GetDeviceID(); err != nil {
		return nil, err
	} else if id != 0x71 && id != 0x73 {
		return nil, fmt.Errorf("WHO_AM_I is %#x, not an MPU-9250 (0x71) or MPU-9255 (0x73)", id)
	}
	if err := m.Init(); err != nil {
		return nil, err
	}
	// Written directly rather than with the driver's setters: its masked
	// writes can only set bits, and its init sequence leaves PWR_MGMT_2 at
	// 0x01, which disables the gyro's Z axis.
	for _, w := range [][2]byte{
		{reg.MPU9250_PWR_MGMT_2, 0},
		{reg.MPU9250_ACCEL_CONFIG, k.accelSel << 3},
		{reg.MPU9250_GYRO_CONFIG, k.gyroSel << 3},
	} {
		if err := m.WriteByteAddress(w[0], w[1]); err != nil {
			return nil, err
		}
	}
	// Gyro start-up time is 35 ms (datasheet table 1).
	if err := clock.Sleep(ctx, clock.Or(k.cfg.Clock), 40*time.Millisecond); err != nil {
		return nil, err
	}
	return i2ckit.Driver[*mpu9250.MPU9250]{Dev: m, Read: k.sample, Halt: sleep}, nil
}

func (k *kind) sample(_ context.Context, m *mpu9250.MPU9250, e *i2ckit.Emitter) error {
	a, err := m.GetAcceleration()
	if err != nil {
		return err
	}
	g, err := m.GetRotation()
	if err != nil {
		return err
	}
	t, err := m.GetTemperature()
	if err != nil {
		return err
	}
	e.Reading(k.sources[0], float64(a.X)*k.accelScale, "m/s²")
	e.Reading(k.sources[1], float64(a.Y)*k.accelScale, "m/s²")
	e.Reading(k.sources[2], float64(a.Z)*k.accelScale, "m/s²")
	e.Reading(k.sources[3], float64(g.X)*k.gyroScale, "°/s")
	e.Reading(k.sources[4], float64(g.Y)*k.gyroScale, "°/s")
	e.Reading(k.sources[5], float64(g.Z)*k.gyroScale, "°/s")
	// Register map 4.23: TEMP_degC = TEMP_OUT/333.87 + 21 (room offset 0).
	e.Reading(k.sources[6], float64(int16(t))/333.87+21, "°C")
	return nil
}

// sleep puts the chip in sleep mode: ~8 µA instead of ~3.5 mA while the
// agent is not sampling.
func sleep(m *mpu9250.MPU9250) error { return m.SetSleepEnabled(true) }
