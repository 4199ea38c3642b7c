package i2csim

import (
	"math"
	"math/rand/v2"
	"time"
)

// INA219 simulates a TI INA219 current/power monitor (datasheet SBOS448,
// section 8.6): a pointer register, 16-bit big-endian registers config
// (0x00, reset 0x399F), shunt voltage (0x01, 10 µV/LSB, saturating at the
// PGA range), bus voltage (0x02, 4 mV/LSB in bits 15..3, CNVR and OVF
// flags, saturating at the 16/32 V range), power (0x03), current (0x04)
// and calibration (0x05, bit 0 always 0).
//
// Current and power are computed by the device as the datasheet says —
// current = shunt·cal/4096, power = current·bus/5000 — so they read 0 until
// a driver writes the calibration register: after a power cycle a driver
// that does not recalibrate reads no current. Conversions take the ADC
// time selected by BADC/SADC (84 µs … 68.1 ms) and run continuously or
// once per config write (triggered modes), as MODE says.
type INA219 struct {
	chip
	cfg INA219Config
	rng *rand.Rand

	ptr                   byte
	config, cal           uint16
	shunt, bus            uint16
	power, current        uint16
	cycleStart            time.Time
	cycles                int64 // completed conversions in this cycle run
	triggered, continuous bool
}

// INA219Config is the simulated circuit around an INA219.
type INA219Config struct {
	ShuntOhms float64 // the board's shunt resistor (0.1 Ω when 0)
	Bus       Curve   // V at IN- against GND
	Current   Curve   // A through the shunt, IN+ to IN-
	Seed      uint64
}

// NewINA219 returns a simulated INA219.
func NewINA219(cfg INA219Config) *INA219 {
	if cfg.ShuntOhms <= 0 {
		cfg.ShuntOhms = 0.1
	}
	return &INA219{cfg: cfg, rng: newRNG(cfg.Seed)}
}

// PowerOn implements Device.
func (d *INA219) PowerOn(now time.Time) {
	d.powerOn(now, func() { d.reset(now) })
}

func (d *INA219) reset(now time.Time) {
	d.ptr, d.cal = 0, 0
	d.shunt, d.bus, d.power, d.current = 0, 0, 0, 0
	d.setConfig(now, 0x399F)
}

func (d *INA219) setConfig(now time.Time, v uint16) {
	d.config = v &^ 0x8000
	d.cycleStart, d.cycles = now, 0
	mode := v & 7
	d.continuous = mode >= 5
	d.triggered = mode >= 1 && mode <= 3
	d.bus &^= 2 // writing config clears CNVR
}

// Tx implements Device.
func (d *INA219) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	if len(w) >= 1 {
		d.ptr = w[0]
	}
	if len(w) >= 3 {
		v := uint16(w[1])<<8 | uint16(w[2])
		switch d.ptr {
		case 0x00:
			if v&0x8000 != 0 {
				d.reset(now)
			} else {
				d.setConfig(now, v)
			}
		case 0x05:
			d.cal = v &^ 1
			d.compute()
		}
	}
	if d.ptr > 5 {
		return deviceNACK("ina219: no register %#02x", d.ptr)
	}
	var v uint16
	switch d.ptr {
	case 0:
		v = d.config
	case 1:
		v = d.shunt
	case 2:
		v = d.bus
	case 3:
		v = d.power
		if len(r) > 0 {
			defer func() { d.bus &^= 2 }() // reading power clears CNVR
		}
	case 4:
		v = d.current
	case 5:
		v = d.cal
	}
	putWord(r, v)
	return nil
}

// adcTime is the conversion time of a BADC/SADC setting (datasheet table 5).
func adcTime(setting uint16) time.Duration {
	if setting&8 == 0 {
		return []time.Duration{84 * time.Microsecond, 148 * time.Microsecond, 276 * time.Microsecond, 532 * time.Microsecond}[setting&3]
	}
	us := []float64{532, 1060, 2130, 4260, 8510, 17020, 34050, 68100}[setting&7]
	return time.Duration(us * float64(time.Microsecond))
}

func (d *INA219) cycleTime() time.Duration {
	mode := d.config & 7
	var t time.Duration
	if mode&1 != 0 { // shunt
		t += adcTime((d.config >> 3) & 0xF)
	}
	if mode&2 != 0 { // bus
		t += adcTime((d.config >> 7) & 0xF)
	}
	return t
}

func (d *INA219) advance(now time.Time) {
	if !d.continuous && !d.triggered {
		return
	}
	ct := d.cycleTime()
	n := int64(now.Sub(d.cycleStart) / ct)
	if d.triggered {
		n = min(n, 1)
	}
	if n <= d.cycles {
		return
	}
	at := d.cycleStart.Add(time.Duration(n) * ct)
	d.cycles = n
	d.convert(at)
}

func (d *INA219) convert(at time.Time) {
	el := at.Sub(d.started)
	mode := d.config & 7
	if mode&1 != 0 {
		vs := d.cfg.Current.Sample(el, d.rng) * d.cfg.ShuntOhms
		rng := []float64{4000, 8000, 16000, 32000}[(d.config>>11)&3]
		c := math.Round(vs / 10e-6)
		d.shunt = uint16(int16(min(max(c, -rng), rng)))
	}
	if mode&2 != 0 {
		fsr := 16.0
		if d.config&0x2000 != 0 {
			fsr = 32
		}
		vb := min(max(d.cfg.Bus.Sample(el, d.rng), 0), fsr)
		d.bus = uint16(math.Round(vb/4e-3)) << 3
	}
	d.bus |= 2 // CNVR
	d.compute()
}

// compute derives current and power from the last conversion and the
// calibration, as the device's arithmetic unit does.
func (d *INA219) compute() {
	d.bus &^= 1
	cur := int64(int16(d.shunt)) * int64(d.cal) / 4096
	if cur > math.MaxInt16 || cur < math.MinInt16 {
		d.bus |= 1 // OVF
		cur = min(max(cur, math.MinInt16), math.MaxInt16)
	}
	d.current = uint16(int16(cur))
	pow := abs64(cur) * int64(d.bus>>3) / 5000
	if pow > math.MaxUint16 {
		d.bus |= 1
		pow = math.MaxUint16
	}
	d.power = uint16(pow)
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
