package i2csim

import (
	"math"
	"math/rand/v2"
	"time"
)

// BH1750 simulates a ROHM BH1750FVI ambient light sensor (datasheet rev
// 2011.11, "Instruction Set Architecture" and "Measurement sequence"). It
// has no registers: one-byte opcodes power it down (0x00) or up (0x01),
// reset the data register (0x07, ignored while powered down), start a
// continuous or one-time measurement in H, H2 or L resolution (0x10, 0x11,
// 0x13, 0x20, 0x21, 0x23) and change the measurement time MTreg (0x40|hi,
// 0x60|lo). A read returns the 16-bit data register.
//
// A measurement takes 120 ms (H, H2) or 16 ms (L), scaled by MTreg/69; the
// data register keeps the previous result until it completes. The count
// is lux·1.2·MTreg/69 (×2 in H2), L resolution drops the low two bits, and
// one-time modes power down after measuring.
type BH1750 struct {
	chip
	cfg BH1750Config
	rng *rand.Rand

	powered bool
	mode    byte // last measurement opcode, 0 if none
	mt      byte // MTreg
	mtHi    byte
	data    uint16
	start   time.Time // start of the running (or first continuous) measurement
	done    int64     // completed measurements since start
}

// BH1750Config is the simulated light falling on a BH1750.
type BH1750Config struct {
	Illuminance Curve // lx
	Seed        uint64
}

// NewBH1750 returns a simulated BH1750.
func NewBH1750(cfg BH1750Config) *BH1750 { return &BH1750{cfg: cfg, rng: newRNG(cfg.Seed)} }

// PowerOn implements Device: the chip starts powered down with MTreg 69.
func (d *BH1750) PowerOn(now time.Time) {
	d.powerOn(now, func() { d.powered, d.mode, d.mt, d.data, d.done = false, 0, 69, 0, 0 })
}

func (d *BH1750) measTime() time.Duration {
	base := 120 * time.Millisecond
	if d.mode&0x0F == 0x03 {
		base = 16 * time.Millisecond
	}
	return base * time.Duration(d.mt) / 69
}

// Tx implements Device.
func (d *BH1750) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	for _, op := range w {
		switch {
		case op == 0x00:
			d.powered, d.mode = false, 0
		case op == 0x01:
			d.powered = true
		case op == 0x07:
			if d.powered {
				d.data = 0
			}
		case op == 0x10 || op == 0x11 || op == 0x13 || op == 0x20 || op == 0x21 || op == 0x23:
			// A measurement command also powers the chip up.
			d.powered, d.mode, d.start, d.done = true, op, now, 0
		case op&0xF8 == 0x40:
			d.mtHi = op & 0x07
		case op&0xE0 == 0x60:
			d.mt = d.mtHi<<5 | op&0x1F
			d.mt = min(max(d.mt, 31), 254)
		default:
			return deviceNACK("bh1750: unknown opcode %#02x", op)
		}
	}
	putWord(r, d.data)
	return nil
}

func (d *BH1750) advance(now time.Time) {
	if d.mode == 0 {
		return
	}
	mt := d.measTime()
	n := int64(now.Sub(d.start) / mt)
	if n <= d.done {
		return
	}
	oneTime := d.mode&0xF0 == 0x20
	if oneTime {
		n = 1
	}
	d.data = d.count(d.start.Add(time.Duration(n) * mt))
	d.done = n
	if oneTime {
		d.powered, d.mode = false, 0
	}
}

func (d *BH1750) count(at time.Time) uint16 {
	lx := max(d.cfg.Illuminance.Sample(at.Sub(d.started), d.rng), 0)
	c := lx * 1.2 * float64(d.mt) / 69
	if d.mode&0x0F == 0x01 { // H-resolution mode 2: 0.5 lx per count
		c *= 2
	}
	v := uint16(min(math.Round(c), 65535))
	if d.mode&0x0F == 0x03 { // L-resolution: 4 lx steps
		v &^= 3
	}
	return v
}
