package i2csim

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// RegFile simulates the most common I²C device shape: 256 8-bit registers
// behind a register pointer (TMP102, LM75, HDC1080, many ADCs and GPIO
// expanders). A write sets the pointer with its first byte and stores the
// rest at auto-incrementing addresses; a read returns bytes from the
// pointer on. Ranges bound with Bind hold a physical quantity encoded by a
// caller-supplied function (the generic kind's own inverse), re-encoded at
// every read, so the register always reflects the curve "now".
type RegFile struct {
	mu      sync.Mutex
	rng     *rand.Rand
	started time.Time

	init     [256]byte
	regs     [256]byte
	ptr      byte
	bindings []binding
}

type binding struct {
	reg    byte
	n      int
	curve  Curve
	encode func(float64) []byte
}

// NewRegFile returns a register file whose power-on contents are init
// (nil: all zero).
func NewRegFile(init map[byte]byte, seed uint64) *RegFile {
	d := &RegFile{rng: newRNG(seed)}
	for a, v := range init {
		d.init[a] = v
	}
	return d
}

// Bind makes registers reg..reg+n-1 hold curve encoded by encode.
func (d *RegFile) Bind(reg byte, n int, curve Curve, encode func(float64) []byte) error {
	if n < 1 || int(reg)+n > 256 {
		return fmt.Errorf("regfile: registers %#02x+%d out of range", reg, n)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.bindings = append(d.bindings, binding{reg: reg, n: n, curve: curve, encode: encode})
	return nil
}

// PowerOn implements Device.
func (d *RegFile) PowerOn(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.started.IsZero() {
		d.started = now
	}
	d.regs, d.ptr = d.init, 0
}

// Peek returns the stored value of register a (tests check writes).
func (d *RegFile) Peek(a byte) byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.regs[a]
}

// Tx implements Device.
func (d *RegFile) Tx(now time.Time, w, r []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(w) > 0 {
		d.ptr = w[0]
		for _, v := range w[1:] {
			d.regs[d.ptr] = v
			d.ptr++
		}
	}
	if len(r) == 0 {
		return nil
	}
	el := now.Sub(d.started)
	for _, b := range d.bindings {
		enc := b.encode(b.curve.Sample(el, d.rng))
		copy(d.regs[b.reg:int(b.reg)+b.n], enc)
	}
	for i := range r {
		r[i] = d.regs[d.ptr]
		d.ptr++
	}
	return nil
}
