// Package simadaptor is a gobot platform adaptor with no hardware behind it:
// the sim board's actuators and every actuator test drive it through the
// same gobot drivers (gpio.LedDriver, ServoDriver, MotorDriver …) that run
// on a Raspberry Pi or a Jetson.
//
// It implements gobot.Connection and gobot's gpio.DigitalWriter, PwmWriter
// and ServoWriter, records every write (time, kind, pin, value) in a bounded
// log, and exposes the resulting pin state. It also has simulated I2C buses
// (periph's i2c.Bus) on which PCA9685 PWM controllers with a real register
// map can be attached, so periph's pca9685 driver runs unchanged against it.
//
// Faults are injected per pin: a write can fail (Fail) or hang until
// released (Block), which is how the tests show that one stuck output does
// not delay the e-stop of the others.
package simadaptor

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
)

// Write is one recorded write.
type Write struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Kind is "digital" (Value 0/1), "pwm" (0–255), "servo" (degrees) or
	// "pca9685" (pulse width in microseconds; Pin is "<bus>/<addr>/<channel>").
	Kind  string  `json:"kind"`
	Pin   string  `json:"pin"`
	Value float64 `json:"value"`
}

// Options configure an Adaptor.
type Options struct {
	// Now timestamps writes (default: the wall clock); pass the actuators' clock so
	// that write times and ramp times agree in tests.
	Now func() time.Time
	// Keep bounds the write log (default 4096): the sim board runs for days.
	Keep int
}

// Adaptor is the simulated platform. It is safe for concurrent use.
type Adaptor struct {
	now  func() time.Time
	keep int

	mu        sync.Mutex
	name      string
	connected bool
	digital   map[string]byte
	pwm       map[string]byte
	servo     map[string]byte
	log       []Write // ring of the last keep writes, oldest first once full
	next      int     // ring position once full
	seq       uint64
	faults    map[string]error
	blocks    map[string]chan struct{}
	waiting   map[string]int // writers held by Block, per pin
	buses     map[string]*Bus
	changed   *sync.Cond
}

// ErrNotConnected is returned by writes before Connect or after Finalize,
// as a real adaptor's unexported pins would fail.
var ErrNotConnected = errors.New("sim adaptor: not connected")

// New makes a disconnected simulated adaptor.
func New(o Options) *Adaptor {
	if o.Now == nil {
		o.Now = clock.Real().Now
	}
	if o.Keep <= 0 {
		o.Keep = 4096
	}
	a := &Adaptor{
		now: o.Now, keep: o.Keep, name: "sim",
		digital: map[string]byte{}, pwm: map[string]byte{}, servo: map[string]byte{},
		faults: map[string]error{}, blocks: map[string]chan struct{}{}, waiting: map[string]int{}, buses: map[string]*Bus{},
	}
	a.changed = sync.NewCond(&a.mu)
	return a
}

// Name implements gobot.Adaptor.
func (a *Adaptor) Name() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.name
}

// SetName implements gobot.Adaptor.
func (a *Adaptor) SetName(n string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.name = n
}

// Connect implements gobot.Adaptor.
func (a *Adaptor) Connect() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.connected = true
	return nil
}

// Finalize implements gobot.Adaptor. Like a real adaptor unexporting its
// pins, it forgets the pin state.
func (a *Adaptor) Finalize() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.connected = false
	clear(a.digital)
	clear(a.pwm)
	clear(a.servo)
	return nil
}

// Connected reports whether Connect was called (and Finalize not since).
func (a *Adaptor) Connected() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.connected
}

// DigitalWrite implements gpio.DigitalWriter.
func (a *Adaptor) DigitalWrite(pin string, val byte) error {
	return a.write("digital", pin, float64(val), func() { a.digital[pin] = val })
}

// PwmWrite implements gpio.PwmWriter (val is the duty on a 0–255 scale).
func (a *Adaptor) PwmWrite(pin string, val byte) error {
	return a.write("pwm", pin, float64(val), func() { a.pwm[pin] = val })
}

// ServoWrite implements gpio.ServoWriter (val is the angle in degrees).
func (a *Adaptor) ServoWrite(pin string, val byte) error {
	if val > 180 {
		return fmt.Errorf("sim adaptor: servo angle %d on pin %s is outside 0–180", val, pin)
	}
	return a.write("servo", pin, float64(val), func() { a.servo[pin] = val })
}

// write applies one write under the lock, honouring injected faults.
func (a *Adaptor) write(kind, pin string, v float64, apply func()) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.gate(pin); err != nil {
		return err
	}
	apply()
	a.record(kind, pin, v)
	return nil
}

// gate waits while pin is blocked and returns its injected fault, if any.
// Called with a.mu held; it releases the lock while blocked.
func (a *Adaptor) gate(pin string) error {
	for {
		ch, blocked := a.blocks[pin]
		if !blocked {
			break
		}
		a.waiting[pin]++
		a.changed.Broadcast()
		a.mu.Unlock()
		<-ch
		a.mu.Lock()
		a.waiting[pin]--
	}
	if !a.connected {
		return ErrNotConnected
	}
	if err := a.faults[pin]; err != nil {
		return fmt.Errorf("sim adaptor: pin %s: %w", pin, err)
	}
	return nil
}

func (a *Adaptor) record(kind, pin string, v float64) {
	a.seq++
	w := Write{Seq: a.seq, Time: a.now(), Kind: kind, Pin: pin, Value: v}
	if len(a.log) < a.keep {
		a.log = append(a.log, w)
	} else {
		a.log[a.next] = w
		a.next = (a.next + 1) % a.keep
	}
	a.changed.Broadcast()
}

// Fail makes every write to pin fail with err (nil clears the fault). For a
// PCA9685 the pin is "<bus>/<addr>", e.g. "sim/0x40".
func (a *Adaptor) Fail(pin string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil {
		delete(a.faults, pin)
	} else {
		a.faults[pin] = err
	}
}

// Block makes writes to pin hang until release is called, as a write to a
// wedged I2C bus or a slow sysfs file would.
func (a *Adaptor) Block(pin string) (release func()) {
	ch := make(chan struct{})
	a.mu.Lock()
	a.blocks[pin] = ch
	a.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			delete(a.blocks, pin)
			a.mu.Unlock()
			close(ch)
		})
	}
}

// Blocked is the number of writes to pin held by Block right now.
func (a *Adaptor) Blocked(pin string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.waiting[pin]
}

// Digital returns the last level written to pin.
func (a *Adaptor) Digital(pin string) (byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.digital[pin]
	return v, ok
}

// PWM returns the last duty (0–255) written to pin.
func (a *Adaptor) PWM(pin string) (byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.pwm[pin]
	return v, ok
}

// Servo returns the last angle written to pin.
func (a *Adaptor) Servo(pin string) (byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	v, ok := a.servo[pin]
	return v, ok
}

// Writes returns the recorded writes, oldest first (at most Options.Keep).
func (a *Adaptor) Writes() []Write {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.writesLocked()
}

func (a *Adaptor) writesLocked() []Write {
	if len(a.log) < a.keep || a.next == 0 {
		return slices.Clone(a.log)
	}
	return append(slices.Clone(a.log[a.next:]), a.log[:a.next]...)
}

// WritesTo returns the recorded writes to one pin, oldest first.
func (a *Adaptor) WritesTo(pin string) []Write {
	var out []Write
	for _, w := range a.Writes() {
		if w.Pin == pin {
			out = append(out, w)
		}
	}
	return out
}

// Count is the number of writes since New (not bounded by Keep).
func (a *Adaptor) Count() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.seq
}

// WaitCount blocks until at least n writes have been recorded or ctx
// ends; it reports whether they were. Tests use it to synchronise with
// actuator goroutines without sleeping.
func (a *Adaptor) WaitCount(ctx context.Context, n uint64) bool {
	stop := context.AfterFunc(ctx, func() {
		a.mu.Lock()
		a.changed.Broadcast()
		a.mu.Unlock()
	})
	defer stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.seq < n {
		if ctx.Err() != nil {
			return false
		}
		a.changed.Wait()
	}
	return true
}

// State describes every output for status displays: pin -> value.
func (a *Adaptor) State() map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]string{}
	for p, v := range a.digital {
		out[p] = strconv.Itoa(int(v))
	}
	for p, v := range a.pwm {
		out[p] = fmt.Sprintf("pwm %d/255", v)
	}
	for p, v := range a.servo {
		out[p] = fmt.Sprintf("servo %d°", v)
	}
	names := slices.Sorted(maps.Keys(a.buses))
	for _, bn := range names {
		b := a.buses[bn]
		addrs := slices.Sorted(maps.Keys(b.devs))
		for _, addr := range addrs {
			d := b.devs[addr]
			for ch := range 16 {
				if p := d.pulseLocked(ch); p > 0 {
					out[fmt.Sprintf("%s/%#02x/%d", bn, addr, ch)] = fmt.Sprintf("pulse %dµs", p.Microseconds())
				}
			}
		}
	}
	return out
}

// Pins lists the pins written so far, sorted.
func (a *Adaptor) Pins() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	set := map[string]bool{}
	for _, w := range a.log {
		set[w.Pin] = true
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
