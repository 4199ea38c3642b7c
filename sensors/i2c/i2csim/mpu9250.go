package i2csim

import (
	"math"
	"math/rand/v2"
	"time"
)

// MPU9250 simulates the accelerometer, gyroscope and temperature sensor of
// an InvenSense MPU-9250 (register map RM-MPU-9250A-00 rev 1.6). It has a
// 128-byte register file with auto-increment; reset values are 0 except
// PWR_MGMT_1 (0x01) and WHO_AM_I (0x71).
//
// Honoured: PWR_MGMT_1 H_RESET (self-clearing) and SLEEP (outputs freeze);
// PWR_MGMT_2 per-axis disable (disabled axes read 0); CONFIG DLPF_CFG and
// SMPLRT_DIV (outputs update at 1 kHz/(1+div), or 8 kHz without the
// DLPF); GYRO_CONFIG FS_SEL (131 … 16.4 LSB/(°/s)); ACCEL_CONFIG AFS_SEL
// (16384 … 2048 LSB/g); user offsets XG/YG/ZG_OFFSET (subtracted, 4/2^FS
// LSB per offset LSB) and XA/YA/ZA_OFFSET (0.98 mg per LSB, bit 0
// reserved); TEMP_OUT = (T−21 °C)·333.87. The FIFO, the DMP, interrupts
// and the AK8963 magnetometer are not simulated (FIFO_COUNT reads 0).
type MPU9250 struct {
	chip
	cfg MPU9250Config
	rng *rand.Rand

	regs       [128]byte
	ptr        byte
	lastSample time.Time
}

// MPU9250Config is the simulated motion of an MPU-9250.
type MPU9250Config struct {
	Accel       [3]Curve // g along X, Y, Z
	Gyro        [3]Curve // °/s around X, Y, Z
	Temperature Curve    // °C of the die
	Seed        uint64
}

// NewMPU9250 returns a simulated MPU-9250.
func NewMPU9250(cfg MPU9250Config) *MPU9250 { return &MPU9250{cfg: cfg, rng: newRNG(cfg.Seed)} }

// PowerOn implements Device.
func (d *MPU9250) PowerOn(now time.Time) {
	d.powerOn(now, func() { d.reset() })
}

func (d *MPU9250) reset() {
	d.regs = [128]byte{}
	d.regs[0x6B] = 0x01
	d.regs[0x75] = 0x71
	d.ptr = 0
	d.lastSample = time.Time{}
}

// Tx implements Device.
func (d *MPU9250) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w) > 0 {
		d.ptr = w[0] & 0x7F
		for _, v := range w[1:] {
			d.write(d.ptr, v)
			d.ptr = (d.ptr + 1) & 0x7F
		}
	}
	if len(r) > 0 {
		d.sample(now)
	}
	for i := range r {
		r[i] = d.regs[d.ptr]
		d.ptr = (d.ptr + 1) & 0x7F
	}
	return nil
}

func (d *MPU9250) write(reg, v byte) {
	switch {
	case reg == 0x6B && v&0x80 != 0: // H_RESET
		d.reset()
	case reg == 0x75, reg >= 0x3B && reg <= 0x60, reg == 0x3A, reg == 0x72 || reg == 0x73:
		// WHO_AM_I, sensor data, INT_STATUS and FIFO_COUNT are read-only.
	default:
		d.regs[reg] = v
	}
}

func (d *MPU9250) period() time.Duration {
	rate := 1000.0
	if dlpf := d.regs[0x1A] & 7; dlpf == 0 || dlpf == 7 {
		rate = 8000
	}
	return time.Duration(float64(time.Second) / (rate / (1 + float64(d.regs[0x19]))))
}

// sample latches the output registers of the last sample period.
func (d *MPU9250) sample(now time.Time) {
	if d.regs[0x6B]&0x40 != 0 { // SLEEP: outputs keep their last values
		return
	}
	p := d.period()
	at := now.Truncate(p)
	if at.Equal(d.lastSample) {
		return
	}
	d.lastSample = at
	el := at.Sub(d.started)
	pm2 := d.regs[0x6C]

	afs := (d.regs[0x1C] >> 3) & 3
	aSens := 16384.0 / float64(int(1)<<afs)
	for i := 0; i < 3; i++ {
		reg := byte(0x3B + 2*i)
		if pm2&(0x20>>i) != 0 {
			d.put16(reg, 0)
			continue
		}
		// XA_OFFSET_H/L at 0x77, 0x7A, 0x7D: 15 bits in [15:1], 0.98 mg/LSB.
		o := int16(uint16(d.regs[0x77+3*i])<<8|uint16(d.regs[0x78+3*i])) >> 1
		g := d.cfg.Accel[i].Sample(el, d.rng) + float64(o)*0.98e-3
		d.put16(reg, sat16(g*aSens))
	}

	d.put16(0x41, sat16((d.cfg.Temperature.Sample(el, d.rng)-21)*333.87))

	fs := (d.regs[0x1B] >> 3) & 3
	gSens := [4]float64{131, 65.5, 32.8, 16.4}[fs] // datasheet table 1
	for i := 0; i < 3; i++ {
		reg := byte(0x43 + 2*i)
		if pm2&(0x04>>i) != 0 {
			d.put16(reg, 0)
			continue
		}
		o := int16(uint16(d.regs[0x13+2*i])<<8 | uint16(d.regs[0x14+2*i]))
		lsb := d.cfg.Gyro[i].Sample(el, d.rng)*gSens - float64(o)*4/float64(int(1)<<fs)
		d.put16(reg, sat16(lsb))
	}
}

func (d *MPU9250) put16(reg byte, v int16) {
	d.regs[reg], d.regs[reg+1] = byte(uint16(v)>>8), byte(v)
}

func sat16(v float64) int16 {
	return int16(min(max(math.Round(v), math.MinInt16), math.MaxInt16))
}
