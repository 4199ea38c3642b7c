package i2csim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// RegFile simulates the most common I²C device shape: 256 registers of 1
// or 2 bytes behind a register pointer (TMP102, LM75, HDC1080, many ADCs
// and GPIO expanders). A write sets the pointer with its first byte and
// stores the rest from that register on; a read returns bytes from the
// pointed register on, running into the following registers. Ranges bound
// with Bind hold a physical quantity encoded by a caller-supplied function
// (the generic kind's own inverse), re-encoded at every read, so the
// register always reflects the curve "now".
type RegFile struct {
	chip
	rng   *rand.Rand
	width int

	init     []byte
	regs     []byte
	ptr      byte
	bindings []binding
}

type binding struct {
	off    int
	n      int
	curve  Curve
	encode func(float64) []byte
}

// NewRegFile returns a register file of 256 registers of width bytes (1
// or 2), all zero at power-on until set with Poke.
func NewRegFile(width int, seed uint64) *RegFile {
	if width != 2 {
		width = 1
	}
	return &RegFile{rng: newRNG(seed), width: width, init: make([]byte, 256*width), regs: make([]byte, 256*width)}
}

// Poke sets the power-on contents of the registers from reg on.
func (d *RegFile) Poke(reg byte, data []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	off := int(reg) * d.width
	if off+len(data) > len(d.init) {
		return fmt.Errorf("regfile: %d bytes at register %#02x run past the end", len(data), reg)
	}
	copy(d.init[off:], data)
	copy(d.regs[off:], data)
	return nil
}

// Bind makes the n bytes from register reg on hold curve encoded by encode.
func (d *RegFile) Bind(reg byte, n int, curve Curve, encode func(float64) []byte) error {
	off := int(reg) * d.width
	if n < 1 || off+n > len(d.regs) {
		return fmt.Errorf("regfile: %d bytes at register %#02x out of range", n, reg)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bindings = append(d.bindings, binding{off: off, n: n, curve: curve, encode: encode})
	return nil
}

// PowerOn implements Device.
func (d *RegFile) PowerOn(now time.Time) {
	d.powerOn(now, func() {
		copy(d.regs, d.init)
		d.ptr = 0
	})
}

// Peek returns the stored bytes of register reg (tests check writes).
func (d *RegFile) Peek(reg byte) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	off := int(reg) * d.width
	return append([]byte(nil), d.regs[off:off+d.width]...)
}

// Tx implements Device.
func (d *RegFile) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w) > 0 {
		d.ptr = w[0]
		off := int(d.ptr) * d.width
		for _, v := range w[1:] {
			d.regs[off%len(d.regs)] = v
			off++
		}
	}
	if len(r) == 0 {
		return nil
	}
	el := now.Sub(d.started)
	for _, b := range d.bindings {
		copy(d.regs[b.off:b.off+b.n], b.encode(b.curve.Sample(el, d.rng)))
	}
	off := int(d.ptr) * d.width
	for i := range r {
		r[i] = d.regs[off%len(d.regs)]
		off++
	}
	return nil
}
