// Package ads1x15 is the "ads1115" (16-bit) and "ads1015" (12-bit) sensor
// kinds: TI analog-to-digital converters read through periph.io's ads1x15
// driver, with a scale, offset and unit per channel so that a battery
// divider or a current-sense amplifier reads in volts or amperes. Each
// channel becomes the reading <name>.<channel name>.
//
// Sample block (Raspberry Pi, ADDR pin to GND):
//
//	sensors:
//	  - name: power
//	    kind: ads1115
//	    bus: "1"
//	    address: 0x48          # 0x49 ADDR=VDD, 0x4a SDA, 0x4b SCL
//	    interval: 1s
//	    thresholds:
//	      - {quantity: battery, below: 11.1, hysteresis: 0.3, event: battery_low}
//	    options:
//	      data_rate: 128        # samples/s; the slowest rate at or above it is used
//	      channels:
//	        - name: battery     # 3S LiPo through a 10k/4.7k divider: ×3.128
//	          input: "0"        # "0".."3" against GND, or "0-1", "0-3", "1-3", "2-3"
//	          range: 4.096      # full scale in volts: 6.144 4.096 2.048 1.024 0.512 0.256
//	          scale: 3.128
//	          unit: V
//	        - name: light_pot
//	          input: "1"
//	          range: 4.096
//	          scale: 30.3       # 0–3.3 V -> 0–100 %
//	          unit: "%"
//	      sim:
//	        inputs: {"0": {base: 3.9, drift: -0.05}, "1": {base: 1.65, amplitude: 1, period: 1m}}
//
// A reading is input volts × scale + offset. The PGA range should be the
// smallest that holds the largest input: resolution is range/32768 (ADS1115)
// or range/2048 (ADS1015), and an input beyond it saturates (logged once).
package ads1x15

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/devices/v3/ads1x15"
)

func init() {
	sensors.Register("ads1115", func(cfg sensors.Config) (sensors.Sensor, error) { return New(cfg, 16) })
	sensors.Register("ads1015", func(cfg sensors.Config) (sensors.Sensor, error) { return New(cfg, 12) })
}

// Opts is the options block.
type Opts struct {
	DataRate int             `yaml:"data_rate"`
	Channels []Channel       `yaml:"channels"`
	Retry    sensors.Backoff `yaml:"retry"`
	Sim      *Sim            `yaml:"sim"`
}

// Channel is one input read as one reading.
type Channel struct {
	Name   string   `yaml:"name"`
	Input  string   `yaml:"input"`
	Range  float64  `yaml:"range"`
	Scale  *float64 `yaml:"scale"` // default 1
	Offset float64  `yaml:"offset"`
	Unit   string   `yaml:"unit"` // default V
}

// Sim is the simulated circuit: volts at AIN0..AIN3 (keys "0".."3").
type Sim struct {
	Inputs map[string]i2csim.Curve `yaml:"inputs"`
	Faults []i2csim.FaultWindow    `yaml:"faults"`
}

var (
	inputs = map[string]ads1x15.Channel{
		"0": ads1x15.Channel0, "1": ads1x15.Channel1, "2": ads1x15.Channel2, "3": ads1x15.Channel3,
		"0-1": ads1x15.Channel0Minus1, "0-3": ads1x15.Channel0Minus3, "1-3": ads1x15.Channel1Minus3, "2-3": ads1x15.Channel2Minus3,
	}
	ranges = []float64{6.144, 4.096, 2.048, 1.024, 0.512, 0.256}
)

// New builds an ads1115 (bits 16) or ads1015 (bits 12) sensor.
func New(cfg sensors.Config, bits int) (sensors.Sensor, error) {
	opts := Opts{DataRate: 128}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	cfg.Address = i2ckit.Address(cfg, ads1x15.I2CAddr)
	if cfg.Address < 0x48 || cfg.Address > 0x4b {
		return nil, errors.New("address: an ADS1x15 answers at 0x48-0x4b only")
	}
	if len(opts.Channels) == 0 {
		opts.Channels = []Channel{{Name: "ain0", Input: "0", Range: 4.096}}
	}
	var errs []error
	seen := map[string]bool{}
	k := &kind{cfg: cfg, bits: bits, rate: opts.DataRate}
	for i, c := range opts.Channels {
		p := fmt.Sprintf("options.channels[%d]", i)
		errs = append(errs, i2ckit.CheckName(seen, p, c.Name)...)
		in, ok := inputs[c.Input]
		if !ok {
			errs = append(errs, fmt.Errorf("%s.input: not one of 0, 1, 2, 3, 0-1, 0-3, 1-3, 2-3", p))
		}
		if !slices.Contains(ranges, c.Range) {
			errs = append(errs, fmt.Errorf("%s.range: not one of %v (V)", p, ranges))
		}
		scale := 1.0
		if c.Scale != nil {
			scale = *c.Scale
		}
		if c.Unit == "" {
			c.Unit = "V"
		}
		k.channels = append(k.channels, channel{Channel: c, in: in, scale: scale, source: cfg.Name + "." + c.Name})
	}
	rates := []int{8, 16, 32, 64, 128, 250, 475, 860}
	if bits == 12 {
		rates = []int{128, 250, 490, 920, 1600, 2400, 3300}
	}
	if opts.DataRate <= 0 || opts.DataRate > rates[len(rates)-1] {
		errs = append(errs, fmt.Errorf("options.data_rate: must be in 1..%d samples/s", rates[len(rates)-1]))
	}
	sim := Sim{}
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	var simIn [4]i2csim.Curve
	for key, c := range sim.Inputs {
		n := slices.Index([]string{"0", "1", "2", "3"}, key)
		if n < 0 {
			errs = append(errs, errors.New("options.sim.inputs: a key is not an input (want 0..3)"))
			continue
		}
		if err := c.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("options.sim.inputs.%s: %w", key, err))
		}
		simIn[n] = c
	}
	if err := i2csim.ValidateFaults(sim.Faults); err != nil {
		errs = append(errs, fmt.Errorf("options.sim.%w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Each channel is one conversion of 1/rate plus the bus time.
	perSample := time.Duration(len(k.channels)) * time.Second / time.Duration(opts.DataRate)
	return &i2ckit.Loop{
		Cfg: cfg, Interval: time.Second, Min: perSample + 5*time.Millisecond, Backoff: opts.Retry, Open: k.open,
		Sim: func() (i2csim.Device, []i2csim.FaultWindow, error) {
			return i2csim.NewADS1x15(i2csim.ADSConfig{Bits: bits, Inputs: simIn}), sim.Faults, nil
		},
	}, nil
}

type kind struct {
	cfg      sensors.Config
	bits     int
	rate     int
	channels []channel
}

type channel struct {
	Channel
	in        ads1x15.Channel
	scale     float64
	source    string
	saturated bool
}

func (k *kind) open(_ context.Context, bus i2c.Bus) (i2ckit.Device, error) {
	o := ads1x15.Opts{I2cAddress: k.cfg.Address}
	var adc *ads1x15.Dev
	var err error
	if k.bits == 16 {
		adc, err = ads1x15.NewADS1115(bus, &o)
	} else {
		adc, err = ads1x15.NewADS1015(bus, &o)
	}
	if err != nil {
		return nil, err
	}
	d := &device{k: k}
	for i := range k.channels {
		c := &k.channels[i]
		// BestQuality: the slowest data rate at or above the requested one,
		// which averages the most noise away.
		p, err := adc.PinForChannel(c.in, physic.ElectricPotential(c.Range*float64(physic.Volt)), physic.Frequency(k.rate)*physic.Hertz, ads1x15.BestQuality)
		if err != nil {
			return nil, fmt.Errorf("channel %s: %w", c.Name, err)
		}
		d.pins = append(d.pins, p)
	}
	return d, nil
}

type device struct {
	k    *kind
	pins []ads1x15.PinADC
}

func (d *device) Sample(ctx context.Context, e *i2ckit.Emitter) error {
	for i, p := range d.pins {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s, err := p.Read()
		if err != nil {
			return err
		}
		c := &d.k.channels[i]
		full := int32(1<<15 - 1)
		if d.k.bits == 12 {
			full = (1<<11 - 1) << 4
		}
		if (s.Raw >= full || s.Raw <= -full-1) && !c.saturated {
			c.saturated = true
			slog.Warn("ADC input at the end of its range: raise options.channels[].range", "sensor", d.k.cfg.Name, "channel", c.Name, "range_v", c.Range)
		}
		v := float64(s.V) / float64(physic.Volt)
		e.Reading(c.source, v*c.scale+c.Offset, c.Unit)
	}
	return nil
}

func (d *device) Close() error {
	for _, p := range d.pins {
		p.Halt()
	}
	return nil
}
