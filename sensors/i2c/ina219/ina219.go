// Package ina219 is the "ina219" sensor kind: a TI current/power monitor
// on the robot's supply, read through periph.io's ina219 driver.
// Readings: <name>.voltage (V, bus side), <name>.current (A),
// <name>.power (W) and <name>.shunt_voltage (V).
//
// Sample block (Raspberry Pi, the common 0.1 Ω breakout):
//
//	sensors:
//	  - name: supply
//	    kind: ina219
//	    bus: "1"
//	    address: 0x40           # 0x40-0x4f by A0/A1
//	    interval: 1s
//	    thresholds:
//	      - {quantity: current, above: 2.5, hysteresis: 0.2, event: overcurrent}
//	    options:
//	      shunt_ohms: 0.1
//	      max_current: 3.2      # A; sets the resolution: max_current/32768 per LSB
//	      bus_range: 32         # V full scale, 16 or 32
//	      sim:
//	        bus_voltage: {base: 12.4, drift: -0.3}
//	        current: {base: 0.8, amplitude: 0.4, period: 30s}
//
// Current and power are computed by the chip from its calibration
// register, which is lost on a power cycle: the kind recreates the driver
// (which recalibrates) after every fault.
package ina219

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/ina219"
)

func init() { sensors.Register("ina219", New) }

// Opts is the options block.
type Opts struct {
	ShuntOhms  float64         `yaml:"shunt_ohms"`
	MaxCurrent float64         `yaml:"max_current"`
	BusRange   int             `yaml:"bus_range"`
	Retry      sensors.Backoff `yaml:"retry"`
	Sim        *Sim            `yaml:"sim"`
}

// Sim is the simulated supply.
type Sim struct {
	BusVoltage i2csim.Curve         `yaml:"bus_voltage"` // V
	Current    i2csim.Curve         `yaml:"current"`     // A
	Faults     []i2csim.FaultWindow `yaml:"faults"`
}

// defaultSim is a 3S pack slowly discharging under a varying load.
var defaultSim = Sim{
	BusVoltage: i2csim.Curve{Base: 12.4, Drift: -0.3, Noise: 0.005},
	Current:    i2csim.Curve{Base: 0.8, Amplitude: 0.4, Period: 30 * time.Second, Noise: 0.005},
}

// New builds an ina219 sensor.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	opts := Opts{ShuntOhms: 0.1, MaxCurrent: 3.2, BusRange: 32}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	cfg.Address = i2ckit.Address(cfg, 0x40)
	var errs []error
	if cfg.Address < 0x40 || cfg.Address > 0x4f {
		errs = append(errs, fmt.Errorf("address %#x: an INA219 answers at 0x40-0x4f only", cfg.Address))
	}
	if opts.ShuntOhms <= 0 || opts.ShuntOhms > 10 {
		errs = append(errs, errors.New("options.shunt_ohms: must be in (0, 10]"))
	}
	if opts.MaxCurrent <= 0 {
		errs = append(errs, errors.New("options.max_current: must be > 0"))
	} else if opts.ShuntOhms > 0 && opts.MaxCurrent*opts.ShuntOhms > 0.32+1e-9 {
		// The shunt ADC's widest range is ±320 mV.
		errs = append(errs, errors.New("options.max_current: through options.shunt_ohms it is beyond the ±320 mV shunt range"))
	} else if cal := 0.04096 / (opts.MaxCurrent / 32768 * opts.ShuntOhms); cal >= 65536 {
		errs = append(errs, errors.New("options.max_current: too small for options.shunt_ohms (the calibration overflows)"))
	}
	if opts.BusRange != 16 && opts.BusRange != 32 {
		errs = append(errs, errors.New("options.bus_range: must be 16 or 32"))
	}
	sim := defaultSim
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	errs = append(errs, i2ckit.CheckSim(map[string]i2csim.Curve{"bus_voltage": sim.BusVoltage, "current": sim.Current}, sim.Faults)...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	k := &kind{cfg: cfg, opts: opts,
		srcV: cfg.Name + ".voltage", srcI: cfg.Name + ".current", srcP: cfg.Name + ".power", srcS: cfg.Name + ".shunt_voltage"}
	return &i2ckit.Loop{
		Cfg: cfg, Interval: time.Second, Min: 140 * time.Millisecond, Backoff: opts.Retry, Open: k.open,
		Sim: func() (i2csim.Device, []i2csim.FaultWindow, error) {
			return i2csim.NewINA219(i2csim.INA219Config{ShuntOhms: opts.ShuntOhms, Bus: sim.BusVoltage, Current: sim.Current}), sim.Faults, nil
		},
	}, nil
}

type kind struct {
	cfg                    sensors.Config
	opts                   Opts
	srcV, srcI, srcP, srcS string
	overflowWarned         bool
}

// config is what periph's driver writes (0x1FFF: 16 V range, ±320 mV, 128
// samples of shunt and bus, continuous), with the bus range bit set for
// 32 V. The 4 mV bus LSB is the same in both ranges, so the driver's
// conversion stays right; the 16 V range would silently clip a 4S pack.
func (k *kind) config() uint16 {
	if k.opts.BusRange == 32 {
		return 0x3FFF
	}
	return 0x1FFF
}

func (k *kind) open(ctx context.Context, bus i2c.Bus) (i2ckit.Device, error) {
	d, err := ina219.New(bus, &ina219.Opts{
		Address:       int(k.cfg.Address),
		SenseResistor: physic.ElectricResistance(k.opts.ShuntOhms * float64(physic.Ohm)),
		MaxCurrent:    physic.ElectricCurrent(k.opts.MaxCurrent * float64(physic.Ampere)),
	})
	if err != nil {
		return nil, err
	}
	if cfg := k.config(); cfg != 0x1FFF {
		if err := bus.Tx(k.cfg.Address, []byte{0x00, byte(cfg >> 8), byte(cfg)}, nil); err != nil {
			return nil, err
		}
	}
	// The first shunt+bus result needs 2 × 68.1 ms of averaging.
	if err := clock.Sleep(ctx, clock.Or(k.cfg.Clock), 140*time.Millisecond); err != nil {
		return nil, err
	}
	return i2ckit.Driver[*ina219.Dev]{Dev: d, Read: k.sample}, nil
}

func (k *kind) sample(_ context.Context, d *ina219.Dev, e *i2ckit.Emitter) error {
	pm, err := d.Sense()
	if err != nil && err.Error() == "bus voltage register overflow" {
		// OVF: current or power exceeded what max_current allows. Voltages
		// were read and are right; the rest would be clipped.
		if !k.overflowWarned {
			k.overflowWarned = true
			slog.Warn("INA219 math overflow: current above options.max_current", "sensor", k.cfg.Name, "max_current_a", k.opts.MaxCurrent)
		}
		e.Reading(k.srcV, volts(pm.Voltage), "V")
		e.Reading(k.srcS, volts(pm.Shunt), "V")
		return nil
	}
	if err != nil {
		return err
	}
	e.Reading(k.srcV, volts(pm.Voltage), "V")
	e.Reading(k.srcI, float64(pm.Current)/float64(physic.Ampere), "A")
	e.Reading(k.srcP, float64(pm.Power)/float64(physic.Watt), "W")
	e.Reading(k.srcS, volts(pm.Shunt), "V")
	return nil
}

func volts(v physic.ElectricPotential) float64 {
	return math.Round(float64(v)/float64(physic.MicroVolt)) / 1e6
}
