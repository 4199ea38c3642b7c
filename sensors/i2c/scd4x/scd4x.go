// Package scd4x is the "scd4x" sensor kind: a Sensirion SCD40/SCD41
// photoacoustic CO₂ sensor read through periph.io's scd4x driver.
// Readings: <name>.co2 (ppm), <name>.temperature (°C), <name>.humidity
// (%RH).
//
// Sample block:
//
//	sensors:
//	  - name: air
//	    kind: scd4x
//	    bus: "1"
//	    address: 0x62           # fixed
//	    interval: 5s            # the sensor measures every 5 s; shorter is raised to 5 s
//	    thresholds:
//	      - {quantity: co2, above: 1400, hysteresis: 200, priority: normal, event: stale_air}
//	    options:
//	      sim:
//	        co2: {base: 650, drift: 300, max: 2500}    # a closed room filling up
//	        temperature: {base: 22}
//	        humidity: {base: 45}
//
// The sensor runs its own periodic measurement; each sample waits for the
// next result (polling the data-ready flag with the agent's context, so
// shutdown is never held up by a 5 s measurement).
package scd4x

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
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/scd4x"
)

func init() { sensors.Register("scd4x", New) }

// Opts is the options block.
type Opts struct {
	Retry sensors.Backoff `yaml:"retry"`
	Sim   *Sim            `yaml:"sim"`
}

// Sim is the simulated air.
type Sim struct {
	CO2         i2csim.Curve         `yaml:"co2"`         // ppm
	Temperature i2csim.Curve         `yaml:"temperature"` // °C
	Humidity    i2csim.Curve         `yaml:"humidity"`    // %RH
	Faults      []i2csim.FaultWindow `yaml:"faults"`
	// MeasurementInterval replaces the sensor's 5 s period, so tests need
	// not wait for it. Sim only: a real SCD4x cannot go faster.
	MeasurementInterval time.Duration `yaml:"measurement_interval"`
}

// defaultSim: an occupied room whose CO₂ climbs until someone opens a
// window every 40 minutes.
var defaultSim = Sim{
	CO2:         i2csim.Curve{Points: []i2csim.Point{{At: 0, Value: 600}, {At: 35 * time.Minute, Value: 1600}, {At: 40 * time.Minute, Value: 600}}, Repeat: 40 * time.Minute, Noise: 8},
	Temperature: i2csim.Curve{Base: 22.5, Noise: 0.05},
	Humidity:    i2csim.Curve{Base: 44, Noise: 0.2},
}

// New builds an scd4x sensor.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	var opts Opts
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	cfg.Address = i2ckit.Address(cfg, scd4x.SensorAddress)
	var errs []error
	if cfg.Address != scd4x.SensorAddress {
		errs = append(errs, fmt.Errorf("address %#x: an SCD4x answers at 0x62 only", cfg.Address))
	}
	sim := defaultSim
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	errs = append(errs, i2ckit.CheckSim(map[string]i2csim.Curve{"co2": sim.CO2, "temperature": sim.Temperature, "humidity": sim.Humidity}, sim.Faults)...)
	if sim.MeasurementInterval < 0 {
		errs = append(errs, errors.New("options.sim.measurement_interval: must be >= 0"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	period := 5 * time.Second
	if cfg.Platform == "sim" && sim.MeasurementInterval > 0 {
		period = sim.MeasurementInterval
	}
	k := &kind{cfg: cfg, period: period,
		srcC: cfg.Name + ".co2", srcT: cfg.Name + ".temperature", srcH: cfg.Name + ".humidity"}
	return &i2ckit.Loop{
		Cfg: cfg, Interval: period, Min: period, Backoff: opts.Retry, Open: k.open,
		Sim: func() (i2csim.Device, []i2csim.FaultWindow, error) {
			return i2csim.NewSCD4x(i2csim.SCD4xConfig{CO2: sim.CO2, Temperature: sim.Temperature, Humidity: sim.Humidity, Interval: sim.MeasurementInterval}), sim.Faults, nil
		},
	}, nil
}

type kind struct {
	cfg              sensors.Config
	period           time.Duration
	srcC, srcT, srcH string
}

func (k *kind) open(_ context.Context, bus i2c.Bus) (i2ckit.Device, error) {
	// NewI2C wakes the sensor, stops any measurement left running by a
	// previous process (600 ms) and starts periodic measurement.
	d, err := scd4x.NewI2C(bus, k.cfg.Address)
	if err != nil {
		return nil, err
	}
	return &device{k: k, d: d, raw: &i2c.Dev{Bus: bus, Addr: k.cfg.Address}}, nil
}

type device struct {
	k   *kind
	d   *scd4x.Dev
	raw *i2c.Dev
}

func (d *device) Sample(ctx context.Context, e *i2ckit.Emitter) error {
	// Wait for the next measurement here, with ctx, instead of inside the
	// driver's Sense, which sleeps in 1 s steps without a context.
	clk := clock.Or(d.k.cfg.Clock)
	deadline := clk.Now().Add(2*d.k.period + time.Second)
	for {
		ready, err := d.dataReady()
		if err != nil {
			return err
		}
		if ready {
			break
		}
		if clk.Now().After(deadline) {
			return fmt.Errorf("no measurement within %s", 2*d.k.period+time.Second)
		}
		if err := clock.Sleep(ctx, clk, min(d.k.period/10, 250*time.Millisecond)); err != nil {
			return err
		}
	}
	var env scd4x.Env
	if err := d.d.Sense(&env); err != nil {
		return err
	}
	e.Reading(d.k.srcC, float64(env.CO2), "ppm")
	e.Reading(d.k.srcT, float64(env.Temperature-physic.ZeroCelsius)/float64(physic.Celsius), "°C")
	e.Reading(d.k.srcH, float64(env.Humidity)/float64(physic.PercentRH), "%RH")
	return nil
}

// dataReady sends get_data_ready_status (datasheet 3.8.2): the low 11 bits
// of the answer are non-zero when a measurement is waiting.
func (d *device) dataReady() (bool, error) {
	var r [3]byte
	if err := d.raw.Tx([]byte{0xe4, 0xb8}, r[:]); err != nil {
		return false, err
	}
	if crc8(r[:2]) != r[2] {
		return false, errors.New("scd4x: data ready status: CRC mismatch")
	}
	return (uint16(r[0])<<8|uint16(r[1]))&0x07FF != 0, nil
}

// crc8 is Sensirion's CRC-8: polynomial 0x31, initial value 0xFF.
func crc8(b []byte) byte {
	crc := byte(0xFF)
	for _, v := range b {
		crc ^= v
		for range 8 {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x31
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Close stops periodic measurement (the driver then waits the 500 ms the
// sensor needs before it accepts another command).
func (d *device) Close() error { return d.d.Halt() }
