// Package i2csim is an in-process I²C bus with simulated devices that have
// real register maps, so that periph.io's own device drivers run unchanged
// against it: on the "sim" board, in tests and in benchmarks.
//
// A Bus implements periph's i2c.BusCloser. Devices are attached at an
// address; each transaction is routed to the device, which sees the bytes
// written and fills the bytes read exactly as the datasheet says: register
// pointers, auto-increment, control registers that change what the next
// conversion does, conversion times, power-on defaults.
//
// The physical world a device measures is a set of Curves (a temperature
// drifting, a light level dropping at dusk). Faults are injected per
// address: a device can NACK every transaction (held in reset, a stuck
// clock), NACK some of them (a loose connector), or vanish (unplugged) and
// come back power-cycled, with its registers at their reset values, so a
// driver that does not re-initialise after a fault reads garbage, as it
// would on a real robot.
//
// Simulated devices: BME280/BMP280, ADS1115/ADS1015, INA219, BH1750,
// MPU-9250, SCD4x and a generic register-file device.
package i2csim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/registry"
	"periph.io/x/conn/v3/i2c"
	"periph.io/x/conn/v3/physic"
)

// Device is a simulated I²C device.
type Device interface {
	// Tx is one transaction at the device's address: w is written, then r
	// is read after a repeated start. A non-nil error is a NACK.
	Tx(now time.Time, w, r []byte) error
	// PowerOn puts the device in its power-on reset state. The bus calls it
	// when the device is attached and when it reappears after vanishing.
	PowerOn(now time.Time)
}

// ErrNACK is wrapped by every error of a transaction that was not
// acknowledged.
var ErrNACK = errors.New("no acknowledge")

// NACKError says which address did not answer and why.
type NACKError struct {
	Bus    string
	Addr   uint16
	Reason string
}

func (e *NACKError) Error() string {
	return fmt.Sprintf("i2csim %s: address %#02x: %s (NACK)", e.Bus, e.Addr, e.Reason)
}

// Unwrap lets errors.Is(err, ErrNACK) match.
func (e *NACKError) Unwrap() error { return ErrNACK }

// Fault is what is wrong with a device.
type Fault uint8

const (
	// NoFault: the device answers normally.
	NoFault Fault = iota
	// NACK: the device is present and powered but NACKs every transaction
	// (brown-out, held in reset). Its registers are kept.
	NACK
	// Vanish: the device is gone (unplugged). When it comes back it has
	// been power-cycled: registers are at their reset values.
	Vanish
	// Flaky: each transaction NACKs with the probability set by SetFlaky
	// (a loose connector, a long cable). Registers are kept.
	Flaky
)

func (f Fault) String() string {
	switch f {
	case NoFault:
		return "none"
	case NACK:
		return "nack"
	case Vanish:
		return "vanish"
	case Flaky:
		return "flaky"
	}
	return fmt.Sprintf("fault(%d)", uint8(f))
}

// ParseFault is the inverse of Fault.String.
func ParseFault(s string) (Fault, error) {
	for f := NoFault; f <= Flaky; f++ {
		if f.String() == s {
			return f, nil
		}
	}
	return 0, errors.New("unknown fault (want nack, vanish or flaky)")
}

// FaultWindow schedules a fault relative to the time the device was
// attached: active from After for For, repeating every Every (0: once).
// It is how the sim board exercises the fault path with no test code.
type FaultWindow struct {
	Mode  string        `yaml:"mode"` // nack, vanish or flaky
	After time.Duration `yaml:"after"`
	For   time.Duration `yaml:"for"`
	Every time.Duration `yaml:"every"`
	Rate  float64       `yaml:"rate"` // flaky: probability that a transaction NACKs
}

func (w FaultWindow) validate() error {
	f, err := ParseFault(w.Mode)
	switch {
	case err != nil:
		return fmt.Errorf("mode: %w", err)
	case f == NoFault:
		return errors.New("mode: none has no effect")
	case w.After < 0:
		return errors.New("after: want ≥ 0")
	case w.For <= 0:
		return errors.New("for: want > 0")
	case w.Every < 0 || w.Every != 0 && w.Every <= w.For:
		return errors.New("every: want 0 (once) or longer than for")
	case f == Flaky && (w.Rate <= 0 || w.Rate > 1):
		return errors.New("rate: a flaky fault's must be in (0, 1]")
	}
	return nil
}

func (w FaultWindow) active(elapsed time.Duration) bool {
	if elapsed < w.After {
		return false
	}
	d := elapsed - w.After
	if w.Every > 0 {
		d %= w.Every
	}
	return d < w.For
}

// ValidateFaults checks scheduled fault windows, for config validation.
func ValidateFaults(ws []FaultWindow) error {
	for i, w := range ws {
		if err := w.validate(); err != nil {
			return fmt.Errorf("faults[%d].%w", i, err)
		}
	}
	return nil
}

type slot struct {
	dev      Device
	attached time.Time
	now      func() time.Time // the device's clock: the sensor's that attached it
	fault    Fault
	rate     float64
	windows  []FaultWindow
	gone     bool // was absent at the last transaction: power-cycle on return
}

// Bus is a simulated I²C bus. It serialises transactions like a real bus
// controller and is safe for concurrent use.
type Bus struct {
	name  string
	clock func() time.Time

	mu   sync.Mutex
	devs map[uint16]*slot
	rng  *rand.Rand

	tx    atomic.Uint64
	nacks atomic.Uint64
}

// Option configures a Bus.
type Option func(*Bus)

// WithClock makes the bus (and the devices attached without a clock of
// their own) read time from now, for tests that step time instead of
// sleeping. Periph drivers still sleep in real time, so use it only with
// devices driven directly through Tx.
func WithClock(now func() time.Time) Option { return func(b *Bus) { b.clock = now } }

// NewBus returns an empty bus.
func NewBus(name string, opts ...Option) *Bus {
	b := &Bus{name: name, clock: clock.Real().Now, devs: map[uint16]*slot{}, rng: rand.New(rand.NewPCG(1, 2))}
	for _, o := range opts {
		o(b)
	}
	return b
}

var shared = registry.NewShared(func(name string) *Bus { return NewBus(name) })

// Shared returns the process-wide simulated bus with this name, creating
// it on first use. Sensors of the sim board that name the same bus share
// it, as sensors on one header share /dev/i2c-1.
func Shared(name string) *Bus { return shared.Get(name) }

// Now is the bus clock.
func (b *Bus) Now() time.Time { return b.clock() }

// String implements i2c.Bus.
func (b *Bus) String() string { return "i2csim:" + b.name }

// SetSpeed implements i2c.Bus; the simulated bus has no speed.
func (b *Bus) SetSpeed(physic.Frequency) error { return nil }

// Close implements i2c.BusCloser. Devices stay attached: closing a handle
// to /dev/i2c-1 does not unplug anything either.
func (b *Bus) Close() error { return nil }

// Attach connects dev at addr and powers it on; it lives on the bus clock.
func (b *Bus) Attach(addr uint16, dev Device) error { return b.AttachTimed(addr, dev, nil) }

// AttachTimed is Attach with the device living on now (nil: the bus
// clock): a sim sensor's device on the shared bus runs on the sensor's
// clock, so its curves and scheduled faults follow the run's time.
func (b *Bus) AttachTimed(addr uint16, dev Device, now func() time.Time) error {
	if addr < 0x03 || addr > 0x77 {
		return fmt.Errorf("i2csim %s: address %#02x outside 0x03-0x77", b.name, addr)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, dup := b.devs[addr]; dup {
		return fmt.Errorf("i2csim %s: address %#02x already in use", b.name, addr)
	}
	if now == nil {
		now = b.clock
	}
	t := now()
	dev.PowerOn(t)
	b.devs[addr] = &slot{dev: dev, attached: t, now: now}
	return nil
}

// Detach removes the device at addr.
func (b *Bus) Detach(addr uint16) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.devs, addr)
}

// Device returns the device at addr, or nil.
func (b *Bus) Device(addr uint16) Device {
	b.mu.Lock()
	defer b.mu.Unlock()
	if s := b.devs[addr]; s != nil {
		return s.dev
	}
	return nil
}

// Addresses lists the attached addresses, sorted (like i2cdetect).
func (b *Bus) Addresses() []uint16 {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]uint16, 0, len(b.devs))
	for a := range b.devs {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// SetFault injects (or with NoFault clears) a fault at addr.
func (b *Bus) SetFault(addr uint16, f Fault) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.devs[addr]
	if s == nil {
		return fmt.Errorf("i2csim %s: no device at %#02x", b.name, addr)
	}
	s.fault = f
	if f == Flaky && s.rate == 0 {
		s.rate = 0.5
	}
	return nil
}

// SetFlaky makes the device at addr NACK each transaction with
// probability rate.
func (b *Bus) SetFlaky(addr uint16, rate float64) error {
	if err := b.SetFault(addr, Flaky); err != nil {
		return err
	}
	b.mu.Lock()
	b.devs[addr].rate = rate
	b.mu.Unlock()
	return nil
}

// ScheduleFaults replaces the scheduled fault windows of addr.
func (b *Bus) ScheduleFaults(addr uint16, ws []FaultWindow) error {
	if err := ValidateFaults(ws); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.devs[addr]
	if s == nil {
		return fmt.Errorf("i2csim %s: no device at %#02x", b.name, addr)
	}
	s.windows = append([]FaultWindow(nil), ws...)
	return nil
}

// Stats returns the number of transactions and how many were NACKed.
func (b *Bus) Stats() (tx, nacked uint64) { return b.tx.Load(), b.nacks.Load() }

// Tx implements i2c.Bus.
func (b *Bus) Tx(addr uint16, w, r []byte) error {
	b.tx.Add(1)
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.devs[addr]
	if s == nil {
		return b.nack(addr, "no device")
	}
	now := s.now()
	fault, rate := s.fault, s.rate
	for _, win := range s.windows {
		if win.active(now.Sub(s.attached)) {
			fault, _ = ParseFault(win.Mode)
			rate = win.Rate
			break
		}
	}
	switch fault {
	case Vanish:
		s.gone = true
		return b.nack(addr, "no device")
	case NACK:
		return b.nack(addr, "device not responding")
	case Flaky:
		if b.rng.Float64() < rate {
			return b.nack(addr, "transfer failed")
		}
	}
	if s.gone {
		s.gone = false
		s.dev.PowerOn(now)
	}
	if err := s.dev.Tx(now, w, r); err != nil {
		b.nacks.Add(1)
		return fmt.Errorf("i2csim %s: address %#02x: %w", b.name, addr, err)
	}
	return nil
}

func (b *Bus) nack(addr uint16, why string) error {
	b.nacks.Add(1)
	return &NACKError{Bus: b.name, Addr: addr, Reason: why}
}

// deviceNACK is returned by devices that refuse a transaction (a command
// they do not accept in their current state).
func deviceNACK(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrNACK, fmt.Sprintf(format, a...))
}

var _ i2c.BusCloser = (*Bus)(nil)

// putWord answers a read of a 16-bit register, big-endian: reading past
// the two bytes repeats the word, as these chips do.
func putWord(r []byte, v uint16) {
	for i := range r {
		if i%2 == 0 {
			r[i] = byte(v >> 8)
		} else {
			r[i] = byte(v)
		}
	}
}
