// Package bmxx80 is the "bme280" and "bmp280" sensor kinds: Bosch
// temperature/pressure(/humidity) sensors read through periph.io's bmxx80
// driver. Readings: <name>.temperature (°C), <name>.pressure (hPa) and, on
// a BME280, <name>.humidity (%RH).
//
// Sample block (Raspberry Pi, breakout with SDO to GND):
//
//	sensors:
//	  - name: env
//	    kind: bme280            # or bmp280 (no humidity)
//	    bus: "1"                # /dev/i2c-1, header pins 3 (SDA) and 5 (SCL)
//	    address: 0x76           # 0x77 when SDO is tied to VDDIO
//	    interval: 5s            # one forced-mode conversion per sample
//	    thresholds:
//	      - {quantity: temperature, above: 45, hysteresis: 2, event: overheat}
//	    options:
//	      oversampling: {temperature: 2, pressure: 16, humidity: 1}  # 0 skips a quantity
//	      filter: 0             # IIR coefficient 0|2|4|8|16; >0 runs the chip in normal mode
//	      retry: {initial: 500ms, max: 30s}
//	      sim:                  # used only on platform sim
//	        temperature: {base: 22, amplitude: 0.5, period: 10m}
//	        pressure: {base: 1013.25, drift: -0.4}     # hPa, per hour
//	        humidity: {base: 45}
//	        faults: [{mode: vanish, after: 2m, for: 15s, every: 10m}]
//
// Each sample is a forced-mode conversion (datasheet "weather monitoring"):
// the chip sleeps between samples, so it does not warm itself up and skew
// its own temperature. With a filter the chip runs in normal mode instead,
// converting every interval, because the IIR filter only smooths
// consecutive conversions.
package bmxx80

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/bmxx80"
)

func init() {
	sensors.Register("bme280", func(cfg sensors.Config) (sensors.Sensor, error) { return New(cfg, true) })
	sensors.Register("bmp280", func(cfg sensors.Config) (sensors.Sensor, error) { return New(cfg, false) })
}

// Opts is the options block.
type Opts struct {
	Oversampling Oversampling    `yaml:"oversampling"`
	Filter       int             `yaml:"filter"`
	Retry        sensors.Backoff `yaml:"retry"`
	Sim          *Sim            `yaml:"sim"`
}

// Oversampling per quantity: 0 (skip), 1, 2, 4, 8 or 16.
type Oversampling struct {
	Temperature int `yaml:"temperature"`
	Pressure    int `yaml:"pressure"`
	Humidity    int `yaml:"humidity"`
}

// Sim is the simulated environment on platform sim.
type Sim struct {
	Temperature i2csim.Curve         `yaml:"temperature"` // °C
	Pressure    i2csim.Curve         `yaml:"pressure"`    // hPa
	Humidity    i2csim.Curve         `yaml:"humidity"`    // %RH
	Faults      []i2csim.FaultWindow `yaml:"faults"`
}

// defaultSim is a room on a quiet day: slow temperature swing, falling
// pressure (weather coming), humidity around 45 %.
var defaultSim = Sim{
	Temperature: i2csim.Curve{Base: 22, Amplitude: 0.5, Period: 10 * time.Minute, Noise: 0.01},
	Pressure:    i2csim.Curve{Base: 1013.25, Drift: -0.4},
	Humidity:    i2csim.Curve{Base: 45, Amplitude: 3, Period: 15 * time.Minute},
}

// New builds a bme280 (humidity true) or bmp280 sensor.
func New(cfg sensors.Config, humidity bool) (sensors.Sensor, error) {
	opts := Opts{Oversampling: Oversampling{Temperature: 2, Pressure: 16, Humidity: 1}}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	if !humidity {
		opts.Oversampling.Humidity = 0
	}
	bopts, err := opts.driverOpts()
	if err != nil {
		return nil, err
	}
	sim := defaultSim
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	if err := errors.Join(i2ckit.CheckSim(map[string]i2csim.Curve{"temperature": sim.Temperature, "pressure": sim.Pressure, "humidity": sim.Humidity}, sim.Faults)...); err != nil {
		return nil, err
	}
	cfg.Address = i2ckit.Address(cfg, 0x76)
	if cfg.Address != 0x76 && cfg.Address != 0x77 {
		return nil, fmt.Errorf("address %#x: a BMx280 answers at 0x76 or 0x77 only", cfg.Address)
	}
	k := &kind{
		cfg: cfg, opts: bopts, wantHumidity: humidity && bopts.Humidity != bmxx80.Off,
		srcT: cfg.Name + ".temperature", srcP: cfg.Name + ".pressure", srcH: cfg.Name + ".humidity",
	}
	chip := "bme280"
	if !humidity {
		chip = "bmp280"
	}
	l := &i2ckit.Loop{
		Cfg: cfg, Interval: 5 * time.Second, Backoff: opts.Retry, Open: k.open,
		// One conversion at 16x pressure oversampling takes ~45 ms.
		Min: 50 * time.Millisecond,
		Sim: func() (i2csim.Device, []i2csim.FaultWindow, error) {
			return i2csim.NewBME280(i2csim.BME280Config{Chip: chip, Temperature: sim.Temperature, Pressure: sim.Pressure, Humidity: sim.Humidity}), sim.Faults, nil
		},
	}
	if bopts.Filter != bmxx80.NoFilter {
		k.opts.Standby = max(l.Cfg.Interval, 50*time.Millisecond)
	}
	return l, nil
}

// oversampling is the driver's setting for each count the options allow.
var oversampling = map[int]bmxx80.Oversampling{
	0: bmxx80.Off, 1: bmxx80.O1x, 2: bmxx80.O2x, 4: bmxx80.O4x, 8: bmxx80.O8x, 16: bmxx80.O16x,
}

func (o Opts) driverOpts() (bmxx80.Opts, error) {
	os := func(key string, v int) (bmxx80.Oversampling, error) {
		if s, ok := oversampling[v]; ok {
			return s, nil
		}
		return 0, fmt.Errorf("options.oversampling.%s: not one of 0, 1, 2, 4, 8, 16", key)
	}
	var b bmxx80.Opts
	var err, e error
	b.Temperature, e = os("temperature", o.Oversampling.Temperature)
	err = errors.Join(err, e)
	b.Pressure, e = os("pressure", o.Oversampling.Pressure)
	err = errors.Join(err, e)
	b.Humidity, e = os("humidity", o.Oversampling.Humidity)
	err = errors.Join(err, e)
	if o.Oversampling.Temperature == 0 {
		// The chip needs the temperature to compensate everything else.
		err = errors.Join(err, errors.New("options.oversampling.temperature: must be at least 1"))
	}
	switch o.Filter {
	case 0:
		b.Filter = bmxx80.NoFilter
	case 2:
		b.Filter = bmxx80.F2
	case 4:
		b.Filter = bmxx80.F4
	case 8:
		b.Filter = bmxx80.F8
	case 16:
		b.Filter = bmxx80.F16
	default:
		err = errors.Join(err, errors.New("options.filter: not one of 0, 2, 4, 8, 16"))
	}
	return b, err
}

type kind struct {
	cfg              sensors.Config
	opts             bmxx80.Opts
	wantHumidity     bool
	srcT, srcP, srcH string
	warned           bool
}

func (k *kind) open(_ context.Context, bus i2c.Bus) (i2ckit.Device, error) {
	opts := k.opts
	d, err := bmxx80.NewI2C(bus, k.cfg.Address, &opts)
	if err != nil {
		return nil, err
	}
	// The driver detects the chip; a BMP280 sold as a "BME280" breakout is
	// common, and has no humidity sensor.
	isBME := strings.HasPrefix(d.String(), "BME280")
	if k.wantHumidity && !isBME && !k.warned {
		k.warned = true
		slog.Warn("kind bme280 but the chip is not a BME280: no humidity", "sensor", k.cfg.Name, "chip", d.String())
	}
	return &device{k: k, d: d, humidity: k.wantHumidity && isBME, pressure: opts.Pressure != bmxx80.Off}, nil
}

type device struct {
	k                  *kind
	d                  *bmxx80.Dev
	humidity, pressure bool
}

func (d *device) Sample(_ context.Context, e *i2ckit.Emitter) error {
	var env physic.Env
	if err := d.d.Sense(&env); err != nil {
		return err
	}
	e.Reading(d.k.srcT, float64(env.Temperature-physic.ZeroCelsius)/float64(physic.Celsius), "°C")
	if d.pressure {
		e.Reading(d.k.srcP, float64(env.Pressure)/float64(100*physic.Pascal), "hPa")
	}
	if d.humidity {
		e.Reading(d.k.srcH, float64(env.Humidity)/float64(physic.PercentRH), "%RH")
	}
	return nil
}

func (d *device) Close() error { return d.d.Halt() }
