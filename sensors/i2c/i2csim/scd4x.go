package i2csim

import (
	"math"
	"math/rand/v2"
	"time"
)

// SCD4x simulates a Sensirion SCD40/SCD41 CO₂ sensor (datasheet v1.6,
// section 3): 16-bit commands, every data word followed by a CRC-8
// (polynomial 0x31, init 0xFF) that the sensor checks on writes and the
// driver checks on reads.
//
// In idle mode the sensor accepts configuration commands (temperature
// offset, altitude, ambient pressure, automatic self-calibration, serial
// number, variant, persist, reinit, factory reset). start_periodic_measurement
// (or its low-power variant) produces a new measurement every interval (5 s,
// 30 s); in that mode only read_measurement, get_data_ready_status,
// ambient pressure and stop_periodic_measurement are answered, anything
// else is NACKed. read_measurement NACKs when no new data is ready and
// clears the ready flag. After stop_periodic_measurement, reinit, persist
// and factory reset the sensor is busy (500 ms, 30 ms, 800 ms, 1200 ms)
// and NACKs. wake_up is never acknowledged, as on the real part.
type SCD4x struct {
	chip
	cfg SCD4xConfig
	rng *rand.Rand

	periodic   bool
	interval   time.Duration
	measStart  time.Time
	measDone   int64
	ready      bool
	co2, t, rh uint16
	busyUntil  time.Time
	pending    []uint16 // response of the last read command

	tempOffset, altitude, pressure uint16
	asc, ascTarget                 uint16
	ascInitial, ascStandard        uint16
}

// SCD4xConfig is the simulated air around an SCD4x.
type SCD4xConfig struct {
	CO2         Curve // ppm
	Temperature Curve // °C
	Humidity    Curve // %RH
	Variant     string
	// Interval replaces the datasheet's 5 s periodic measurement interval,
	// for tests that cannot wait (30 s low-power mode scales with it).
	Interval time.Duration
	Seed     uint64
}

// NewSCD4x returns a simulated SCD41 (or SCD40 with Variant "scd40").
func NewSCD4x(cfg SCD4xConfig) *SCD4x {
	if cfg.Interval <= 0 {
		cfg.Interval = 5 * time.Second
	}
	return &SCD4x{cfg: cfg, rng: newRNG(cfg.Seed)}
}

// PowerOn implements Device: idle mode with factory settings, after the
// datasheet's 30 ms power-up time.
func (d *SCD4x) PowerOn(now time.Time) {
	d.powerOn(now, func() {
		d.periodic, d.ready, d.pending = false, false, nil
		d.busyUntil = now.Add(30 * time.Millisecond)
		d.factory()
	})
}

func (d *SCD4x) factory() {
	d.tempOffset = uint16(math.Round(4 * 65535 / 175.0)) // 4 °C
	d.altitude, d.pressure = 0, 1013
	d.asc, d.ascTarget = 1, 400
	d.ascInitial, d.ascStandard = 44, 156
}

// CRC8 is the Sensirion checksum of one data word.
func CRC8(b []byte) byte {
	crc := byte(0xFF)
	for _, v := range b {
		crc ^= v
		for i := 0; i < 8; i++ {
			if crc&0x80 != 0 {
				crc = crc<<1 ^ 0x31
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Tx implements Device.
func (d *SCD4x) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	if now.Before(d.busyUntil) {
		return deviceNACK("scd4x: busy")
	}
	if len(w) > 0 {
		if len(w) < 2 || (len(w)-2)%3 != 0 {
			return deviceNACK("scd4x: malformed command")
		}
		var args []uint16
		for i := 2; i < len(w); i += 3 {
			if CRC8(w[i:i+2]) != w[i+2] {
				return deviceNACK("scd4x: CRC mismatch in argument")
			}
			args = append(args, uint16(w[i])<<8|uint16(w[i+1]))
		}
		if err := d.command(now, uint16(w[0])<<8|uint16(w[1]), args); err != nil {
			return err
		}
	}
	if len(r) > 0 {
		if d.pending == nil || len(r) > 3*len(d.pending) || len(r)%3 != 0 {
			return deviceNACK("scd4x: nothing to read")
		}
		for i := 0; i < len(r)/3; i++ {
			r[3*i], r[3*i+1] = byte(d.pending[i]>>8), byte(d.pending[i])
			r[3*i+2] = CRC8(r[3*i : 3*i+2])
		}
		d.pending = nil
	}
	return nil
}

func (d *SCD4x) command(now time.Time, cmd uint16, args []uint16) error {
	arg := func() (uint16, error) {
		if len(args) != 1 {
			return 0, deviceNACK("scd4x: command %#04x takes one argument", cmd)
		}
		return args[0], nil
	}
	// Commands the sensor executes while measuring periodically.
	switch cmd {
	case 0xec05: // read_measurement
		if !d.ready {
			return deviceNACK("scd4x: no measurement data")
		}
		d.ready = false
		d.pending = []uint16{d.co2, d.t, d.rh}
		return nil
	case 0xe4b8: // get_data_ready_status: low 11 bits non-zero when ready
		d.pending = []uint16{0x8000}
		if d.ready {
			d.pending[0] |= 0x0006
		}
		return nil
	case 0x3f86: // stop_periodic_measurement
		d.periodic = false
		d.busyUntil = now.Add(500 * time.Millisecond)
		return nil
	case 0xe000: // get/set_ambient_pressure (hPa)
		if len(args) == 0 {
			d.pending = []uint16{d.pressure}
			return nil
		}
		v, err := arg()
		d.pressure = v
		return err
	}
	if d.periodic {
		return deviceNACK("scd4x: command %#04x not allowed during periodic measurement", cmd)
	}
	for _, s := range scd4xSettings {
		switch cmd {
		case s.get:
			d.pending = []uint16{*s.word(d)}
			return nil
		case s.set:
			v, err := arg()
			*s.word(d) = v
			return err
		}
	}
	var err error
	switch cmd {
	case 0x21b1, 0x21ac: // start_periodic_measurement, start_low_power_periodic_measurement
		d.periodic, d.ready, d.measStart, d.measDone = true, false, now, 0
		d.interval = d.cfg.Interval
		if cmd == 0x21ac {
			d.interval *= 6
		}
	case 0x36f6: // wake_up: "the sensor does not acknowledge the wake_up command"
		return deviceNACK("scd4x: wake_up is not acknowledged")
	case 0x3682: // get_serial_number
		d.pending = []uint16{0x2a7f, 0x0b07, 0x3bc1}
	case 0x202f: // get_sensor_variant: bits 15..12 are 0 for SCD40, 1 for SCD41
		d.pending = []uint16{0x1440}
		if d.cfg.Variant == "scd40" {
			d.pending[0] = 0x0440
		}
	case 0x3615: // persist_settings
		d.busyUntil = now.Add(800 * time.Millisecond)
	case 0x3646: // reinit
		d.busyUntil = now.Add(30 * time.Millisecond)
	case 0x3632: // perform_factory_reset
		d.factory()
		d.busyUntil = now.Add(1200 * time.Millisecond)
	default:
		return deviceNACK("scd4x: unknown command %#04x", cmd)
	}
	return err
}

// scd4xSettings are the settings words with their get_ and set_ commands:
// temperature offset, sensor altitude, automatic self-calibration (enabled,
// target, initial and standard period).
var scd4xSettings = []struct {
	get, set uint16
	word     func(d *SCD4x) *uint16
}{
	{0x2318, 0x241d, func(d *SCD4x) *uint16 { return &d.tempOffset }},
	{0x2322, 0x2427, func(d *SCD4x) *uint16 { return &d.altitude }},
	{0x2313, 0x2416, func(d *SCD4x) *uint16 { return &d.asc }},
	{0x233f, 0x243a, func(d *SCD4x) *uint16 { return &d.ascTarget }},
	{0x2340, 0x2445, func(d *SCD4x) *uint16 { return &d.ascInitial }},
	{0x234b, 0x244e, func(d *SCD4x) *uint16 { return &d.ascStandard }},
}

func (d *SCD4x) advance(now time.Time) {
	if !d.periodic {
		return
	}
	n := int64(now.Sub(d.measStart) / d.interval)
	if n <= d.measDone {
		return
	}
	d.measDone = n
	el := d.measStart.Add(time.Duration(n) * d.interval).Sub(d.started)
	co2 := max(d.cfg.CO2.Sample(el, d.rng), 0)
	t := d.cfg.Temperature.Sample(el, d.rng)
	rh := min(max(d.cfg.Humidity.Sample(el, d.rng), 0), 100)
	d.co2 = uint16(min(math.Round(co2), 40000))
	d.t = uint16(min(max(math.Round((t+45)*65535/175), 0), 65535))
	d.rh = uint16(math.Round(rh * 65535 / 100))
	d.ready = true
}
