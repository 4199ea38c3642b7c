package i2csim

import (
	"math"
	"math/rand/v2"
	"time"
)

// ADS1x15 simulates a TI ADS1115 (16-bit) or ADS1015 (12-bit) ADC as in
// the ADS111x datasheet (SBAS444) section 9.6: a pointer register selects
// conversion (0), config (1), Lo_thresh (2) or Hi_thresh (3). A one-byte
// write sets the pointer, a three-byte write also writes the register,
// reads return the pointed register big-endian.
//
// Config honours OS (start a single-shot conversion; reads 0 while
// converting), MUX (four single-ended and four differential inputs), PGA
// (±6.144 V … ±0.256 V full scale, saturating at the rails of the code
// range), MODE (continuous or single-shot) and DR (conversion time
// 1/DR). The comparator and ALERT/RDY pin are not simulated.
type ADS1x15 struct {
	chip
	cfg ADSConfig
	rng *rand.Rand

	ptr        byte
	config     uint16
	lo, hi     uint16
	conv       uint16
	convEnd    time.Time // single-shot: end of the running conversion
	contStart  time.Time // continuous: start of the first conversion
	contDone   int64
	converting bool
}

// ADSConfig is the simulated circuit around an ADS1x15.
type ADSConfig struct {
	Bits   int      // 16 (ADS1115, default) or 12 (ADS1015)
	Inputs [4]Curve // volts at AIN0..AIN3 against GND
	Seed   uint64
}

// NewADS1x15 returns a simulated ADS1115 or ADS1015.
func NewADS1x15(cfg ADSConfig) *ADS1x15 {
	if cfg.Bits != 12 {
		cfg.Bits = 16
	}
	return &ADS1x15{cfg: cfg, rng: newRNG(cfg.Seed)}
}

// PowerOn implements Device: register reset values of datasheet 9.6.
func (d *ADS1x15) PowerOn(now time.Time) {
	d.powerOn(now, func() {
		d.ptr, d.config, d.lo, d.hi, d.conv = 0, 0x8583, 0x8000, 0x7FFF, 0
		d.converting = false
	})
}

var (
	adsFSR       = [8]float64{6.144, 4.096, 2.048, 1.024, 0.512, 0.256, 0.256, 0.256}
	ads1115Rates = [8]float64{8, 16, 32, 64, 128, 250, 475, 860}
	ads1015Rates = [8]float64{128, 250, 490, 920, 1600, 2400, 3300, 3300}
)

func (d *ADS1x15) period() time.Duration {
	rates := ads1115Rates
	if d.cfg.Bits == 12 {
		rates = ads1015Rates
	}
	return time.Duration(float64(time.Second) / rates[(d.config>>5)&7])
}

// Tx implements Device.
func (d *ADS1x15) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	// A two-byte write sets the pointer; its lone data byte never reaches
	// the register, which is written only when both bytes arrived.
	if len(w) >= 1 {
		d.ptr = w[0] & 3
	}
	if len(w) >= 3 {
		d.write(now, uint16(w[1])<<8|uint16(w[2]))
	}
	var v uint16
	switch d.ptr {
	case 0:
		v = d.conv
	case 1:
		v = d.config &^ 0x8000
		if !d.converting {
			v |= 0x8000
		}
	case 2:
		v = d.lo
	case 3:
		v = d.hi
	}
	putWord(r, v)
	return nil
}

func (d *ADS1x15) write(now time.Time, v uint16) {
	switch d.ptr {
	case 0: // conversion register is read-only
	case 1:
		d.config = v
		if v&0x0100 == 0 { // continuous conversion mode
			d.contStart, d.contDone = now, 0
			d.converting = true
		} else if v&0x8000 != 0 && !d.converting { // single-shot start
			d.convEnd = now.Add(d.period())
			d.converting = true
		}
	case 2:
		d.lo = v
	case 3:
		d.hi = v
	}
}

func (d *ADS1x15) advance(now time.Time) {
	if !d.converting {
		return
	}
	if d.config&0x0100 != 0 { // single-shot
		if !now.Before(d.convEnd) {
			d.conv = d.code(d.convEnd)
			d.converting = false // powers down again
		}
		return
	}
	p := d.period()
	n := int64(now.Sub(d.contStart) / p)
	if n > d.contDone {
		d.conv = d.code(d.contStart.Add(time.Duration(n) * p))
		d.contDone = n
	}
}

// code converts the input selected by MUX at time at.
func (d *ADS1x15) code(at time.Time) uint16 {
	el := at.Sub(d.started)
	in := func(i int) float64 { return d.cfg.Inputs[i].Sample(el, d.rng) }
	var v float64
	switch mux := (d.config >> 12) & 7; mux {
	case 0:
		v = in(0) - in(1)
	case 1:
		v = in(0) - in(3)
	case 2:
		v = in(1) - in(3)
	case 3:
		v = in(2) - in(3)
	default:
		v = in(int(mux - 4))
	}
	fsr := adsFSR[(d.config>>9)&7]
	if d.cfg.Bits == 12 {
		c := math.Round(v / fsr * 2048)
		c = min(max(c, -2048), 2047)
		return uint16(int16(c) << 4)
	}
	c := math.Round(v / fsr * 32768)
	c = min(max(c, -32768), 32767)
	return uint16(int16(c))
}
