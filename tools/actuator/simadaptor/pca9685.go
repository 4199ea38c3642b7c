package simadaptor

import (
	"fmt"
	"time"

	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
)

// PCA9685 register map (NXP PCA9685 datasheet, rev. 4, §7.3).
const (
	regMode1    = 0x00
	regMode2    = 0x01
	regLED0     = 0x06 // LED0_ON_L; channel n at 0x06+4n: ON_L, ON_H, OFF_L, OFF_H
	regAllLED   = 0xFA // ALL_LED_ON_L … ALL_LED_OFF_H (0xFA–0xFD), write-only
	regPrescale = 0xFE

	mode1Restart = 0x80
	mode1AI      = 0x20 // register auto-increment
	mode1Sleep   = 0x10
	mode1AllCall = 0x01
	fullBit      = 0x10 // bit 4 of LEDn_ON_H (full on) and LEDn_OFF_H (full off)

	oscillator = 25_000_000 // internal oscillator, Hz
)

// Bus is a simulated I2C bus (periph's i2c.BusCloser). Transactions to an
// address with no device attached fail as a NACK would.
type Bus struct {
	a    *Adaptor
	name string
	devs map[uint16]*PCA9685
}

var _ i2c.BusCloser = (*Bus)(nil)

// OpenI2C returns the simulated bus of that name, creating it on first use.
func (a *Adaptor) OpenI2C(bus string) (i2c.BusCloser, error) {
	return a.I2CBus(bus), nil
}

// I2CBus returns the simulated bus of that name, creating it on first use.
func (a *Adaptor) I2CBus(bus string) *Bus {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.buses[bus]
	if b == nil {
		b = &Bus{a: a, name: bus, devs: map[uint16]*PCA9685{}}
		a.buses[bus] = b
	}
	return b
}

// AttachPCA9685 puts a PCA9685 at addr on the bus, in its power-on state.
func (b *Bus) AttachPCA9685(addr uint16) *PCA9685 {
	b.a.mu.Lock()
	defer b.a.mu.Unlock()
	if d := b.devs[addr]; d != nil {
		return d
	}
	d := &PCA9685{bus: b, addr: addr}
	d.powerOn()
	b.devs[addr] = d
	return d
}

// Device returns the PCA9685 at addr, or nil.
func (b *Bus) Device(addr uint16) *PCA9685 {
	b.a.mu.Lock()
	defer b.a.mu.Unlock()
	return b.devs[addr]
}

func (b *Bus) String() string { return "sim-i2c-" + b.name }

// Close implements io.Closer; the simulated bus stays usable.
func (b *Bus) Close() error { return nil }

// SetSpeed implements i2c.Bus.
func (b *Bus) SetSpeed(physic.Frequency) error { return nil }

// Tx implements i2c.Bus: w is written, then r is read.
func (b *Bus) Tx(addr uint16, w, r []byte) error {
	a := b.a
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.gate(fmt.Sprintf("%s/%#02x", b.name, addr)); err != nil {
		return err
	}
	d := b.devs[addr]
	if d == nil {
		return fmt.Errorf("sim i2c %s: address %#02x: no device (NACK)", b.name, addr)
	}
	d.tx(w, r)
	return nil
}

// PCA9685 is a simulated 16-channel, 12-bit PWM controller with the real
// register behaviour that matters to a driver: the auto-increment bit, the
// sleep bit gating the outputs and the prescaler (writable only in sleep),
// full-on/full-off bits, ALL_LED registers, and the power-on state (asleep,
// all outputs full-off). Reading a channel's output goes through Pulse.
type PCA9685 struct {
	bus  *Bus
	addr uint16
	regs [256]byte
	ptr  byte
	last [16]time.Duration // last logged pulse per channel
}

func (d *PCA9685) powerOn() {
	d.regs = [256]byte{}
	d.regs[regMode1] = mode1Sleep | mode1AllCall
	d.regs[regMode2] = 0x04
	d.regs[regPrescale] = 0x1E
	for ch := range 16 {
		d.regs[regLED0+4*ch+3] = fullBit
	}
	d.ptr = 0
}

func (d *PCA9685) tx(w, r []byte) {
	if len(w) > 0 {
		d.ptr = w[0]
		for _, v := range w[1:] {
			d.store(d.ptr, v)
			d.advance()
		}
		if len(w) > 1 {
			d.logChanges()
		}
	}
	for i := range r {
		if d.ptr >= regAllLED && d.ptr <= regAllLED+3 {
			r[i] = 0 // write-only, reads as zero
		} else {
			r[i] = d.regs[d.ptr]
		}
		d.advance()
	}
}

func (d *PCA9685) advance() {
	if d.regs[regMode1]&mode1AI != 0 {
		d.ptr++
	}
}

func (d *PCA9685) store(reg, v byte) {
	switch {
	case reg == regMode1:
		// Writing 1 to RESTART clears it; the bit reads back 0 here.
		d.regs[regMode1] = v &^ mode1Restart
	case reg == regPrescale:
		if d.regs[regMode1]&mode1Sleep != 0 {
			d.regs[regPrescale] = v
		}
	case reg >= regAllLED && reg <= regAllLED+3:
		for ch := range 16 {
			d.regs[regLED0+4*ch+int(reg-regAllLED)] = v
		}
	default:
		d.regs[reg] = v
	}
}

// Period is the PWM period set by the prescaler.
func (d *PCA9685) Period() time.Duration {
	d.bus.a.mu.Lock()
	defer d.bus.a.mu.Unlock()
	return d.periodLocked()
}

func (d *PCA9685) periodLocked() time.Duration {
	return time.Duration(float64(time.Second) * 4096 * float64(int(d.regs[regPrescale])+1) / oscillator)
}

// Sleeping reports whether the oscillator is off (outputs off).
func (d *PCA9685) Sleeping() bool {
	d.bus.a.mu.Lock()
	defer d.bus.a.mu.Unlock()
	return d.regs[regMode1]&mode1Sleep != 0
}

// Pulse is the high time of a channel's output per period; 0 when the chip
// sleeps or the channel is full-off.
func (d *PCA9685) Pulse(ch int) time.Duration {
	d.bus.a.mu.Lock()
	defer d.bus.a.mu.Unlock()
	return d.pulseLocked(ch)
}

func (d *PCA9685) pulseLocked(ch int) time.Duration {
	if ch < 0 || ch > 15 || d.regs[regMode1]&mode1Sleep != 0 {
		return 0
	}
	base := regLED0 + 4*ch
	onL, onH, offL, offH := d.regs[base], d.regs[base+1], d.regs[base+2], d.regs[base+3]
	var counts int
	switch {
	case offH&fullBit != 0:
		counts = 0
	case onH&fullBit != 0:
		counts = 4096
	default:
		on := int(onH&0x0F)<<8 | int(onL)
		off := int(offH&0x0F)<<8 | int(offL)
		counts = ((off - on) + 4096) % 4096
	}
	return time.Duration(float64(d.periodLocked()) * float64(counts) / 4096)
}

// logChanges records a write for every channel whose output changed, so
// the adaptor's write log shows servo pulses like any other pin.
func (d *PCA9685) logChanges() {
	for ch := range 16 {
		p := d.pulseLocked(ch)
		if p != d.last[ch] {
			d.last[ch] = p
			d.bus.a.record("pca9685", fmt.Sprintf("%s/%#02x/%d", d.bus.name, d.addr, ch), float64(p)/float64(time.Microsecond))
		}
	}
}
