package i2csim

import (
	"math"
	"math/rand/v2"
	"time"
)

// BME280 simulates a Bosch BME280 (or, with Chip "bmp280", a BMP280) as
// described in the BME280 datasheet rev 1.6, section 5 (register map):
//
//   - 0xD0 chip id (0x60 BME280, 0x58 BMP280), 0xE0 soft reset (0xB6);
//   - 0x88-0xA1 and 0xE1-0xE7 trimming parameters, read by the driver to
//     compensate the raw readings; the simulator runs the datasheet's
//     compensation formulas backwards to produce raw ADC values that a
//     correct driver turns into the scripted temperature, pressure and
//     humidity;
//   - 0xF2 ctrl_hum (takes effect only after the next ctrl_meas write),
//     0xF4 ctrl_meas (oversampling, sleep/forced/normal mode), 0xF5 config
//     (standby time, IIR filter; ignored in normal mode), 0xF3 status
//     (measuring bit during a conversion);
//   - 0xF7-0xFE data registers, with 0x80000/0x8000 for skipped
//     measurements, 16+(osrs-1) bits of resolution without the IIR filter
//     and 20 bits with it, updated only when a conversion completes.
//
// Conversion time is the datasheet's typical measurement time (section
// 9.1); forced mode returns to sleep after one conversion, normal mode
// converts every measurement time + t_standby. Intrinsic noise follows the
// datasheet's RMS noise figures, divided by √oversampling.
type BME280 struct {
	chip
	cfg BME280Config
	cal BME280Calibration
	rng *rand.Rand

	regs [256]byte
	ptr  byte

	osrsH      byte // effective humidity oversampling (latched from ctrl_hum)
	mode       byte
	measEnd    time.Time // forced mode: end of the running conversion
	normStart  time.Time // normal mode: start of the first cycle
	normDone   int64     // normal mode: cycles already converted
	readyUntil time.Time // status.im_update set until then
	filtT      float64   // IIR state, raw ADC units
	filtP      float64
	filtValid  bool
}

// BME280Config is the simulated environment of a BME280.
type BME280Config struct {
	Chip        string // "bme280" (default) or "bmp280"
	Temperature Curve  // °C
	Pressure    Curve  // hPa
	Humidity    Curve  // %RH (BME280 only)
	// Quiet disables the intrinsic sensor noise, for tests that compare
	// readings with the curve to the last bit.
	Quiet bool
	// Calibration replaces the default trimming parameters.
	Calibration *BME280Calibration
	Seed        uint64
}

// BME280Calibration are the trimming parameters of one chip.
type BME280Calibration struct {
	T1                             uint16
	T2, T3                         int16
	P1                             uint16
	P2, P3, P4, P5, P6, P7, P8, P9 int16
	H1                             uint8
	H2                             int16
	H3                             uint8
	H4, H5                         int16 // 12-bit signed
	H6                             int8
}

// DefaultBME280Calibration is a real chip's trimming: temperature and
// pressure from the worked example of the BMP280 datasheet (section 8.1,
// table 16), humidity from a BME280 breakout board.
var DefaultBME280Calibration = BME280Calibration{
	T1: 27504, T2: 26435, T3: -1000,
	P1: 36477, P2: -10685, P3: 3024, P4: 2855, P5: 140, P6: -7, P7: 15500, P8: -14600, P9: 6000,
	H1: 75, H2: 362, H3: 0, H4: 313, H5: 50, H6: 30,
}

// NewBME280 returns a simulated BME280/BMP280.
func NewBME280(cfg BME280Config) *BME280 {
	if cfg.Chip == "" {
		cfg.Chip = "bme280"
	}
	d := &BME280{cfg: cfg, cal: DefaultBME280Calibration, rng: newRNG(cfg.Seed)}
	if cfg.Calibration != nil {
		d.cal = *cfg.Calibration
	}
	return d
}

func (d *BME280) isBME() bool { return d.cfg.Chip != "bmp280" }

// PowerOn implements Device.
func (d *BME280) PowerOn(now time.Time) {
	d.powerOn(now, func() { d.reset(now) })
}

func (d *BME280) reset(now time.Time) {
	d.regs = [256]byte{}
	d.ptr = 0
	d.osrsH, d.mode = 0, 0
	d.measEnd, d.normStart = time.Time{}, time.Time{}
	d.normDone = 0
	d.filtValid = false
	if d.isBME() {
		d.regs[0xD0] = 0x60
	} else {
		d.regs[0xD0] = 0x58
	}
	c := d.cal
	put16 := func(a int, v uint16) { d.regs[a], d.regs[a+1] = byte(v), byte(v>>8) }
	put16(0x88, c.T1)
	put16(0x8A, uint16(c.T2))
	put16(0x8C, uint16(c.T3))
	put16(0x8E, c.P1)
	for i, p := range []int16{c.P2, c.P3, c.P4, c.P5, c.P6, c.P7, c.P8, c.P9} {
		put16(0x90+2*i, uint16(p))
	}
	if d.isBME() {
		d.regs[0xA1] = c.H1
		put16(0xE1, uint16(c.H2))
		d.regs[0xE3] = c.H3
		d.regs[0xE4] = byte(c.H4 >> 4)
		d.regs[0xE5] = byte(c.H4&0x0F) | byte(c.H5&0x0F)<<4
		d.regs[0xE6] = byte(c.H5 >> 4)
		d.regs[0xE7] = byte(c.H6)
	}
	// Reset values of the data registers (datasheet table 18).
	d.regs[0xF7], d.regs[0xFA] = 0x80, 0x80
	d.regs[0xFD] = 0x80
	// NVM data are copied to the image registers for ~2 ms after reset.
	d.readyUntil = now.Add(2 * time.Millisecond)
}

// Tx implements Device: I²C writes are register/value pairs (a single byte
// only sets the register pointer); reads auto-increment from the pointer.
func (d *BME280) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.advance(now)
	if len(w) > 0 {
		for len(w) >= 2 {
			d.write(now, w[0], w[1])
			w = w[2:]
		}
		if len(w) == 1 {
			d.ptr = w[0]
		}
	}
	for i := range r {
		r[i] = d.read(now, d.ptr)
		d.ptr++
	}
	return nil
}

func (d *BME280) read(now time.Time, reg byte) byte {
	if reg == 0xF3 {
		var s byte
		if d.measuring(now) {
			s |= 1 << 3
		}
		if now.Before(d.readyUntil) {
			s |= 1
		}
		return s
	}
	if !d.isBME() && (reg == 0xF2 || reg >= 0xFD || (reg >= 0xE1 && reg <= 0xE7) || reg == 0xA1) {
		return 0
	}
	return d.regs[reg]
}

func (d *BME280) write(now time.Time, reg, v byte) {
	switch reg {
	case 0xE0:
		if v == 0xB6 {
			d.reset(now)
		}
	case 0xF2:
		if d.isBME() {
			d.regs[0xF2] = v & 0x07
		}
	case 0xF4:
		d.regs[0xF4] = v
		d.osrsH = d.regs[0xF2] & 0x07 // ctrl_hum is latched by this write
		mode := v & 0x03
		switch {
		case mode == 0:
			d.mode = 0
		case mode == 3:
			if d.mode != 3 {
				d.normStart, d.normDone = now, 0
			}
			d.mode = 3
		default: // 01 and 10 are both forced mode
			if !d.measuring(now) {
				d.mode = 1
				d.measEnd = now.Add(d.measTime())
			}
		}
	case 0xF5:
		// Datasheet 5.4.6: writes to config in normal mode may be ignored;
		// this simulator always ignores them there.
		if d.mode != 3 {
			d.regs[0xF5] = v & 0xFD
		}
	}
}

func (d *BME280) osrs() (t, p, h byte) {
	c := d.regs[0xF4]
	t, p, h = c>>5, (c>>2)&7, d.osrsH
	if !d.isBME() {
		h = 0
	}
	return t, p, h
}

func osCount(o byte) float64 {
	if o == 0 {
		return 0
	}
	if o > 5 {
		o = 5
	}
	return float64(int(1) << (o - 1))
}

// measTime is the typical measurement time of datasheet section 9.1.
func (d *BME280) measTime() time.Duration {
	t, p, h := d.osrs()
	ms := 1.0 + 2*osCount(t)
	if p != 0 {
		ms += 2*osCount(p) + 0.5
	}
	if h != 0 {
		ms += 2*osCount(h) + 0.5
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func (d *BME280) standby() time.Duration {
	bme := []float64{0.5, 62.5, 125, 250, 500, 1000, 10, 20}
	bmp := []float64{0.5, 62.5, 125, 250, 500, 1000, 2000, 4000}
	ms := bme[d.regs[0xF5]>>5]
	if !d.isBME() {
		ms = bmp[d.regs[0xF5]>>5]
	}
	return time.Duration(ms * float64(time.Millisecond))
}

func (d *BME280) measuring(now time.Time) bool {
	switch d.mode {
	case 1:
		return now.Before(d.measEnd)
	case 3:
		cycle := d.measTime() + d.standby()
		into := now.Sub(d.normStart) % cycle
		return into < d.measTime()
	}
	return false
}

// advance completes the conversions that ended by now.
func (d *BME280) advance(now time.Time) {
	switch d.mode {
	case 1:
		if !now.Before(d.measEnd) {
			d.convert(d.measEnd)
			d.mode = 0
			d.regs[0xF4] &^= 0x03
		}
	case 3:
		meas := d.measTime()
		cycle := meas + d.standby()
		el := now.Sub(d.normStart)
		if el < meas {
			return
		}
		done := int64((el-meas)/cycle) + 1
		// The IIR filter has forgotten anything older than a few dozen
		// conversions, so a long gap replays only the last 64.
		first := max(d.normDone, done-64)
		for k := first; k < done; k++ {
			d.convert(d.normStart.Add(time.Duration(k)*cycle + meas))
		}
		d.normDone = done
	}
}

// convert runs one conversion of the quantities measured at time at.
func (d *BME280) convert(at time.Time) {
	el := at.Sub(d.started)
	ot, op, oh := d.osrs()
	coef := []float64{1, 2, 4, 8, 16, 16, 16, 16}[(d.regs[0xF5]>>2)&7]
	filtered := coef > 1

	if ot == 0 {
		// Temperature skipped: nothing else can be compensated either.
		d.put20(0xFA, 0x80000)
		d.put20(0xF7, 0x80000)
		if oh != 0 {
			d.regs[0xFD], d.regs[0xFE] = 0x80, 0x00
		}
		return
	}
	temp := d.cfg.Temperature.Sample(el, d.rng)
	if !d.cfg.Quiet {
		temp += 0.005 / math.Sqrt(osCount(ot)) * d.rng.NormFloat64()
	}
	adcT := float64(d.cal.invertTemp(temp))
	if filtered && d.filtValid {
		d.filtT += (adcT - d.filtT) / coef
		adcT = d.filtT
	}
	d.filtT = adcT
	rawT := resolution(adcT, ot, filtered)
	d.put20(0xFA, rawT)
	tFine := d.cal.tFine(rawT)

	if op == 0 {
		d.put20(0xF7, 0x80000)
	} else {
		pres := d.cfg.Pressure.Sample(el, d.rng) * 100
		if !d.cfg.Quiet {
			pres += 3.3 / math.Sqrt(osCount(op)) * d.rng.NormFloat64()
		}
		adcP := float64(d.cal.invertPressure(pres, tFine))
		if filtered && d.filtValid {
			d.filtP += (adcP - d.filtP) / coef
			adcP = d.filtP
		}
		d.filtP = adcP
		d.put20(0xF7, resolution(adcP, op, filtered))
	}
	d.filtValid = true

	if oh != 0 {
		hum := d.cfg.Humidity.Sample(el, d.rng)
		if !d.cfg.Quiet {
			hum += 0.07 / math.Sqrt(osCount(oh)) * d.rng.NormFloat64()
		}
		adcH := d.cal.invertHumidity(hum, tFine)
		d.regs[0xFD], d.regs[0xFE] = byte(adcH>>8), byte(adcH)
	}
}

// resolution drops the bits a conversion does not produce: 16+(osrs-1)
// bits without the IIR filter, 20 with it (datasheet 3.4.2 and 3.4.3).
func resolution(adc float64, osrs byte, filtered bool) int32 {
	v := int32(math.Round(adc))
	v = min(max(v, 0), 0xFFFFF)
	if filtered {
		return v
	}
	bits := 15 + int(min(osrs, 5))
	step := int32(1) << (20 - bits)
	v = (v + step/2) &^ (step - 1) // nearest value the conversion can produce
	return min(v, 0xFFFFF&^(step-1))
}

func (d *BME280) put20(reg byte, v int32) {
	d.regs[reg] = byte(v >> 12)
	d.regs[reg+1] = byte(v >> 4)
	d.regs[reg+2] = byte(v<<4) & 0xF0
}

// The compensation formulas of the datasheet (section 4.2.3 and 8.2), in
// the integer form of Bosch's reference code. The simulator inverts them
// by bisection: each is monotonic in its raw input over the ADC range.

func (c *BME280Calibration) tFine(adc int32) int32 {
	v1 := ((adc>>3 - int32(c.T1)<<1) * int32(c.T2)) >> 11
	v2 := (((adc>>4 - int32(c.T1)) * (adc>>4 - int32(c.T1)) >> 12) * int32(c.T3)) >> 14
	return v1 + v2
}

// CompensateTemp returns °C for a raw temperature (datasheet 4.2.3).
func (c *BME280Calibration) CompensateTemp(adc int32) float64 {
	return float64((c.tFine(adc)*5+128)>>8) / 100
}

// CompensatePressure returns Pa for a raw pressure (datasheet 4.2.3, 64-bit).
func (c *BME280Calibration) CompensatePressure(adc, tFine int32) float64 {
	v1 := int64(tFine) - 128000
	v2 := v1 * v1 * int64(c.P6)
	v2 += (v1 * int64(c.P5)) << 17
	v2 += int64(c.P4) << 35
	v1 = (v1*v1*int64(c.P3))>>8 + (v1*int64(c.P2))<<12
	v1 = ((int64(1)<<47 + v1) * int64(c.P1)) >> 33
	if v1 == 0 {
		return 0
	}
	p := int64(1048576 - adc)
	p = ((p<<31 - v2) * 3125) / v1
	v1 = (int64(c.P9) * (p >> 13) * (p >> 13)) >> 25
	v2 = (int64(c.P8) * p) >> 19
	p = (p+v1+v2)>>8 + int64(c.P7)<<4
	return float64(uint32(p)) / 256
}

// CompensateHumidity returns %RH for a raw humidity (datasheet 4.2.3).
func (c *BME280Calibration) CompensateHumidity(adc, tFine int32) float64 {
	x := tFine - 76800
	x1 := adc<<14 - int32(c.H4)<<20 - int32(c.H5)*x
	x2 := (x1 + 16384) >> 15
	x3 := (x * int32(c.H6)) >> 10
	x4 := (x * int32(c.H3)) >> 11
	x5 := (x3 * (x4 + 32768)) >> 10
	x6 := ((x5+2097152)*int32(c.H2) + 8192) >> 14
	v := x2 * x6
	v -= ((((v >> 15) * (v >> 15)) >> 7) * int32(c.H1)) >> 4
	v = min(max(v, 0), 419430400)
	return float64(uint32(v>>12)) / 1024
}

func (c *BME280Calibration) invertTemp(celsius float64) int32 {
	return bisect(0, 0xFFFFF, celsius, true, func(a int32) float64 { return float64(c.tFine(a)) / 5120 })
}

func (c *BME280Calibration) invertPressure(pa float64, tFine int32) int32 {
	return bisect(0, 0xFFFFF, pa, false, func(a int32) float64 { return c.CompensatePressure(a, tFine) })
}

func (c *BME280Calibration) invertHumidity(rh float64, tFine int32) int32 {
	rh = min(max(rh, 0), 100)
	return bisect(0, 0xFFFF, rh, true, func(a int32) float64 { return c.CompensateHumidity(a, tFine) })
}

// bisect finds the raw value in [lo, hi] whose image under the monotonic f
// is closest to target.
func bisect(lo, hi int32, target float64, increasing bool, f func(int32) float64) int32 {
	below := func(a int32) bool { // f(a) is on the low side of target
		if increasing {
			return f(a) < target
		}
		return f(a) > target
	}
	a, b := lo, hi
	for a < b {
		m := a + (b-a)/2
		if below(m) {
			a = m + 1
		} else {
			b = m
		}
	}
	if a > lo && math.Abs(f(a-1)-target) < math.Abs(f(a)-target) {
		return a - 1
	}
	return a
}
