// Package generic is the "generic" sensor kind: it reads registers of any
// I²C device and decodes them as the config says, so a sensor without a
// driver is a config change, not a code change. Each entry of
// options.readings becomes the reading <name>.<reading name>.
//
// Sample block — a TI TMP102 temperature sensor (datasheet SBOS397, 7.5):
// register 0x00 holds a 12-bit two's complement temperature, left-aligned
// in two big-endian bytes, 0.0625 °C per count:
//
//	sensors:
//	  - name: board_temp
//	    kind: generic
//	    bus: "1"
//	    address: 0x48
//	    interval: 2s
//	    thresholds:
//	      - {quantity: temperature, above: 70, hysteresis: 5, event: board_hot}
//	    options:
//	      init:                       # written after every (re)connect
//	        - {register: 0x01, data: [0x60, 0xA0]}   # config: 12-bit, 4 Hz (the reset value)
//	      readings:
//	        - name: temperature
//	          register: 0x00          # omit for devices that answer a plain read
//	          length: 2               # bytes, 1..8
//	          order: big              # big | little
//	          signed: true
//	          shift: 4                # drop the 4 unused low bits
//	          bits: 12                # width of the value after the shift
//	          scale: 0.0625
//	          offset: 0
//	          unit: "°C"
//	      sim:
//	        register_bytes: 2         # the TMP102 has 16-bit registers
//	        readings: {temperature: {base: 41, amplitude: 6, period: 5m}}
//
// Decoding: the bytes are assembled in the given order into an unsigned
// integer, shifted right by shift, masked to bits (default: all that
// remain), sign-extended from the top bit when signed, then
// value = raw × scale + offset. For command-driven devices (write a
// command, wait for the conversion, read the result) use command and delay
// instead of register:
//
//	readings:
//	  - {name: humidity, command: [0xF5], delay: 20ms, length: 2, scale: 0.0019073, offset: -6, unit: "%RH"}
package generic

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2csim"
	"periph.io/x/conn/v3/i2c"
)

func init() { sensors.Register("generic", New) }

// Opts is the options block.
type Opts struct {
	Init     []Write         `yaml:"init"`
	Readings []Reading       `yaml:"readings"`
	Retry    sensors.Backoff `yaml:"retry"`
	Sim      *Sim            `yaml:"sim"`
}

// Write is bytes written to a register after connecting.
type Write struct {
	Register uint8   `yaml:"register"`
	Data     []uint8 `yaml:"data"`
}

// Reading is one decoded value.
type Reading struct {
	Name     string        `yaml:"name"`
	Register *uint8        `yaml:"register"`
	Command  []uint8       `yaml:"command"`
	Delay    time.Duration `yaml:"delay"`
	Length   int           `yaml:"length"`
	Order    string        `yaml:"order"`
	Signed   bool          `yaml:"signed"`
	Shift    int           `yaml:"shift"`
	Bits     int           `yaml:"bits"`
	Scale    *float64      `yaml:"scale"` // default 1
	Offset   float64       `yaml:"offset"`
	Unit     string        `yaml:"unit"`
}

// Sim is the simulated device: a register file whose bound registers hold
// the readings' curves, encoded with the readings' own layout.
type Sim struct {
	Readings  map[string]i2csim.Curve `yaml:"readings"`
	Registers []Write                 `yaml:"registers"` // power-on contents of other registers
	// RegisterBytes is the width of one register: 1 (default) or 2 for
	// devices with 16-bit registers such as the TMP102 or INA219.
	RegisterBytes int                  `yaml:"register_bytes"`
	Faults        []i2csim.FaultWindow `yaml:"faults"`
}

// Codec is a validated reading layout. It is exported for tests and for
// tools that want to show what a config decodes a byte string to.
type Codec struct {
	length, shift, bits int
	little, signed      bool
	scale, offset       float64
}

// NewCodec validates the layout of r.
func NewCodec(r Reading) (Codec, error) {
	c := Codec{length: r.Length, shift: r.Shift, bits: r.Bits, signed: r.Signed, scale: 1, offset: r.Offset}
	if r.Scale != nil {
		c.scale = *r.Scale
	}
	var errs []error
	if c.length < 1 || c.length > 8 {
		errs = append(errs, errors.New("length: must be 1..8 bytes"))
		c.length = 1
	}
	switch r.Order {
	case "", "big":
	case "little":
		c.little = true
	default:
		errs = append(errs, errors.New("order: must be big or little"))
	}
	width := 8 * c.length
	if c.shift < 0 || c.shift >= width {
		errs = append(errs, fmt.Errorf("shift: must be 0..%d (length×8 − 1)", width-1))
		c.shift = 0
	}
	if c.bits == 0 {
		c.bits = width - c.shift
	}
	if c.bits < 1 || c.bits > width-c.shift {
		errs = append(errs, fmt.Errorf("bits: must be 1..%d (length×8 − shift)", width-c.shift))
	}
	if c.scale == 0 || math.IsInf(c.scale, 0) {
		errs = append(errs, errors.New("scale: must be a finite non-zero number"))
	}
	return c, errors.Join(errs...)
}

// Decode turns the bytes read into the physical value.
func (c Codec) Decode(b []byte) float64 {
	var buf [8]byte
	var u uint64
	if c.little {
		copy(buf[:], b[:c.length])
		u = binary.LittleEndian.Uint64(buf[:])
	} else {
		copy(buf[8-c.length:], b[:c.length])
		u = binary.BigEndian.Uint64(buf[:])
	}
	u >>= c.shift
	if c.bits < 64 {
		u &= 1<<c.bits - 1
	}
	var raw float64
	if c.signed && c.bits < 64 && u&(1<<(c.bits-1)) != 0 {
		raw = float64(int64(u) - int64(1)<<c.bits)
	} else if c.signed && c.bits == 64 {
		raw = float64(int64(u))
	} else {
		raw = float64(u)
	}
	return raw*c.scale + c.offset
}

// Encode is the inverse of Decode (rounded and clamped to the raw range);
// the simulated device uses it to hold a physical value in its registers.
func (c Codec) Encode(v float64) []byte {
	raw := math.Round((v - c.offset) / c.scale)
	lo, hi := 0.0, math.Ldexp(1, c.bits)-1
	if c.signed {
		lo, hi = -math.Ldexp(1, c.bits-1), math.Ldexp(1, c.bits-1)-1
	}
	raw = min(max(raw, lo), hi)
	// The largest raw value as an integer: as a float (hi) it may round up
	// past it (2^63−1 becomes 2^63), which would wrap to the sign bit.
	top := uint64(1)<<c.bits - 1
	if c.signed {
		top = uint64(1)<<(c.bits-1) - 1
	}
	var u uint64
	switch {
	case raw < 0:
		u = uint64(int64(raw)) & (1<<c.bits - 1)
	case raw >= float64(top):
		u = top
	default:
		u = uint64(raw)
	}
	u <<= c.shift
	var buf [8]byte
	if c.little {
		binary.LittleEndian.PutUint64(buf[:], u)
		return append([]byte(nil), buf[:c.length]...)
	}
	binary.BigEndian.PutUint64(buf[:], u)
	return append([]byte(nil), buf[8-c.length:]...)
}

// New builds a generic sensor.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	var opts Opts
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var errs []error
	if cfg.Address == 0 {
		errs = append(errs, errors.New("address: required (the generic kind has no default)"))
	}
	if len(opts.Readings) == 0 {
		errs = append(errs, errors.New("options.readings: at least one reading is required"))
	}
	k := &kind{cfg: cfg, init: opts.Init}
	seen := map[string]bool{}
	for i, r := range opts.Readings {
		p := fmt.Sprintf("options.readings[%d]", i)
		errs = append(errs, i2ckit.CheckName(seen, p, r.Name)...)
		if r.Register != nil && len(r.Command) > 0 {
			errs = append(errs, fmt.Errorf("%s: set register or command, not both", p))
		}
		if r.Delay < 0 || r.Delay > 5*time.Second {
			errs = append(errs, fmt.Errorf("%s.delay: must be 0..5s", p))
		}
		c, err := NewCodec(r)
		if err != nil {
			errs = append(errs, sensors.Under(p, err)...)
		}
		rd := reading{Reading: r, codec: c, source: cfg.Name + "." + r.Name, write: r.Command}
		if r.Register != nil {
			rd.write = []byte{*r.Register}
		}
		k.readings = append(k.readings, rd)
	}
	for i, w := range opts.Init {
		if len(w.Data) == 0 {
			errs = append(errs, fmt.Errorf("options.init[%d].data: at least one byte", i))
		}
	}
	sim := Sim{}
	if opts.Sim != nil {
		sim = *opts.Sim
	}
	for name, c := range sim.Readings {
		if !seen[name] {
			errs = append(errs, errors.New("options.sim.readings: a key names no reading"))
		}
		if err := c.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("options.sim.readings.%s: %w", name, err))
		}
	}
	if err := i2csim.ValidateFaults(sim.Faults); err != nil {
		errs = append(errs, fmt.Errorf("options.sim.%w", err))
	}
	if sim.RegisterBytes != 0 && sim.RegisterBytes != 1 && sim.RegisterBytes != 2 {
		errs = append(errs, errors.New("options.sim.register_bytes: must be 1 or 2"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &i2ckit.Loop{Cfg: cfg, Interval: time.Second, Backoff: opts.Retry, Open: k.open, Sim: k.sim(sim)}, nil
}

type kind struct {
	cfg      sensors.Config
	init     []Write
	readings []reading
}

type reading struct {
	Reading
	codec  Codec
	source string
	write  []byte // register or command, built once
}

// sim builds a register file from the readings' layouts: a reading with a
// register (or a one-byte command) is bound at that address; a plain read
// starts at register 0.
func (k *kind) sim(s Sim) func() (i2csim.Device, []i2csim.FaultWindow, error) {
	return func() (i2csim.Device, []i2csim.FaultWindow, error) {
		rf := i2csim.NewRegFile(s.RegisterBytes, 1)
		for _, w := range s.Registers {
			if err := rf.Poke(w.Register, w.Data); err != nil {
				return nil, nil, err
			}
		}
		for _, r := range k.readings {
			var at uint8
			switch {
			case r.Register != nil:
				at = *r.Register
			case len(r.Command) == 1:
				at = r.Command[0]
			case len(r.Command) > 1:
				return nil, nil, fmt.Errorf("reading %s: the simulator models one-byte commands only", r.Name)
			}
			c, ok := s.Readings[r.Name]
			if !ok {
				c = i2csim.Const(r.codec.offset)
			}
			if err := rf.Bind(at, r.codec.length, c, r.codec.Encode); err != nil {
				return nil, nil, err
			}
		}
		return rf, s.Faults, nil
	}
}

func (k *kind) open(_ context.Context, bus i2c.Bus) (i2ckit.Device, error) {
	d := &device{k: k, dev: i2c.Dev{Bus: bus, Addr: k.cfg.Address}}
	for _, w := range k.init {
		if err := d.dev.Tx(append([]byte{w.Register}, w.Data...), nil); err != nil {
			return nil, err
		}
	}
	return d, nil
}

type device struct {
	k   *kind
	dev i2c.Dev
	buf [8]byte
}

func (d *device) Sample(ctx context.Context, e *i2ckit.Emitter) error {
	for i := range d.k.readings {
		r := &d.k.readings[i]
		b := d.buf[:r.codec.length]
		w := r.write
		if r.Delay > 0 {
			// Write, wait for the conversion, then a separate read.
			if err := d.dev.Tx(w, nil); err != nil {
				return err
			}
			if err := clock.Sleep(ctx, clock.Or(d.k.cfg.Clock), r.Delay); err != nil {
				return err
			}
			w = nil
		}
		if err := d.dev.Tx(w, b); err != nil {
			return err
		}
		e.Reading(r.source, r.codec.Decode(b), r.Unit)
	}
	return nil
}

func (d *device) Close() error { return nil }
