// Package gpiosim provides simulated GPIO lines that implement periph's
// gpio.PinIO, for the sim board and for tests: an input driven by a
// simulated device (a PIR module, a bouncing push button, an HC-SR04's
// echo), with edge events delivered to WaitForEdge the way the kernel's
// GPIO character device delivers them, and an output whose level changes
// other simulated devices can watch (an HC-SR04's trigger).
//
// periph's own gpiotest.Pin needs its edges fed by hand and cannot follow
// a level that is a function of time; the HC-SR04's echo pulse must be
// exact to the microsecond for a range test to mean anything, so the
// simulator computes levels from timestamps instead of from sleeping
// goroutines.
package gpiosim

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/internal/registry"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/physic"
	"periph.io/x/conn/v3/pin"
)

// ErrBusy is returned by In and Out while the line is claimed elsewhere
// (the kernel's EBUSY: another process holds the line).
var ErrBusy = errors.New("gpiosim: line is busy (held by another consumer)")

// Pin is a simulated GPIO line. The zero value is not usable; use NewPin
// or Shared.
type Pin struct {
	name string

	mu       sync.Mutex
	level    gpio.Level
	driven   bool // an external device drives the level; else the pull decides
	pull     gpio.Pull
	edge     gpio.Edge
	output   bool
	busy     bool
	levelFn  func(time.Time) gpio.Level
	watchers []*watcher
	edges    chan gpio.Level
	halt     chan struct{}
	dropped  int
	// scheduled edges of a level function, queued when their time comes
	// (checked by WaitForEdge), so that a late timer can never deliver an
	// edge after a later one or after the caller has moved on.
	scheduled []scheduledEdge
}

type scheduledEdge struct {
	at time.Time
	l  gpio.Level
}

// NewPin returns a floating input line.
func NewPin(name string) *Pin {
	return &Pin{name: name, edges: make(chan gpio.Level, 64), halt: make(chan struct{}, 1)}
}

var shared = registry.NewShared(NewPin)

// Shared returns the process-wide simulated line of this name, creating it
// on first use: the sim board's sensors and the simulated devices that
// drive them meet here.
func Shared(name string) *Pin { return shared.Get(name) }

// Set drives the line from outside (a device's output). A change of level
// is an edge, queued for WaitForEdge if edge detection asks for it.
func (p *Pin) Set(l gpio.Level) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.driven = true
	p.setLocked(l)
}

// Float stops driving the line: it then reads its pull resistor.
func (p *Pin) Float() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.driven = false
	p.setLocked(p.pull == gpio.PullUp)
}

func (p *Pin) setLocked(l gpio.Level) {
	if l == p.level {
		return
	}
	p.level = l
	if p.edge == gpio.BothEdges || (p.edge == gpio.RisingEdge && l) || (p.edge == gpio.FallingEdge && !l) {
		select {
		case p.edges <- l:
		default:
			p.dropped++ // the kernel's event FIFO overflows the same way
		}
	}
}

// Bounce simulates a mechanical contact settling on final: n spurious
// transitions spaced every, then final. It returns when the line has
// settled.
func (p *Pin) Bounce(final gpio.Level, n int, every time.Duration) {
	l := final
	for i := 0; i < n; i++ {
		p.Set(l)
		l = !l
		time.Sleep(every)
	}
	p.Set(final)
}

// SetLevelFunc makes Read return f(now), for lines whose level is a known
// function of time (an echo pulse). Edges at its transitions are announced
// with ScheduleEdge, since only the caller knows when they happen.
func (p *Pin) SetLevelFunc(f func(time.Time) gpio.Level) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.levelFn = f
}

// ScheduleEdge announces that the level function changes to l at time
// at: WaitForEdge delivers the event from then on, as the kernel would
// have queued it at that instant.
func (p *Pin) ScheduleEdge(at time.Time, l gpio.Level) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.edge == gpio.NoEdge {
		return
	}
	i := len(p.scheduled)
	for i > 0 && p.scheduled[i-1].at.After(at) {
		i--
	}
	p.scheduled = slices.Insert(p.scheduled, i, scheduledEdge{at, l})
}

// due queues the scheduled edges whose time has come and returns when the
// next one is due (zero if none).
func (p *Pin) due(now time.Time) time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, e := range p.scheduled {
		if e.at.After(now) {
			break
		}
		n++
		if p.edge == gpio.BothEdges || (p.edge == gpio.RisingEdge && e.l) || (p.edge == gpio.FallingEdge && !e.l) {
			select {
			case p.edges <- e.l:
			default:
				p.dropped++
			}
		}
	}
	p.scheduled = p.scheduled[n:]
	if len(p.scheduled) == 0 {
		return time.Time{}
	}
	return p.scheduled[0].at
}

type watcher struct{ f func(gpio.Level, time.Time) }

// Watch calls f after every Out with the new level and its time, until
// the returned unwatch is called.
func (p *Pin) Watch(f func(gpio.Level, time.Time)) (unwatch func()) {
	w := &watcher{f}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.watchers = append(p.watchers, w)
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.watchers = slices.DeleteFunc(p.watchers, func(x *watcher) bool { return x == w })
	}
}

// SetBusy makes In and Out fail with ErrBusy, as when another process
// holds the line.
func (p *Pin) SetBusy(b bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = b
}

// Dropped is the number of edge events lost because nobody read them.
func (p *Pin) Dropped() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.dropped
}

// String implements conn.Resource.
func (p *Pin) String() string { return "gpiosim:" + p.name }

// Halt implements conn.Resource: it interrupts a WaitForEdge.
func (p *Pin) Halt() error {
	select {
	case p.halt <- struct{}{}:
	default:
	}
	return nil
}

// Name implements pin.Pin.
func (p *Pin) Name() string { return p.name }

// Number implements pin.Pin.
func (p *Pin) Number() int { return -1 }

// Function implements pin.Pin.
func (p *Pin) Function() string { return string(p.Func()) }

// Func implements pin.PinFunc.
func (p *Pin) Func() pin.Func {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.output {
		return gpio.OUT
	}
	return gpio.IN
}

// SupportedFuncs implements pin.PinFunc.
func (p *Pin) SupportedFuncs() []pin.Func { return []pin.Func{gpio.IN, gpio.OUT} }

// SetFunc implements pin.PinFunc.
func (p *Pin) SetFunc(f pin.Func) error {
	switch f {
	case gpio.IN:
		return p.In(gpio.PullNoChange, gpio.NoEdge)
	case gpio.OUT:
		return p.Out(gpio.Low)
	}
	return fmt.Errorf("gpiosim: function %s not supported", f)
}

// In implements gpio.PinIn. Pending edges are flushed, as the kernel does
// when a line request is reconfigured.
func (p *Pin) In(pull gpio.Pull, edge gpio.Edge) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.busy {
		return ErrBusy
	}
	p.output = false
	if pull != gpio.PullNoChange {
		p.pull = pull
	}
	p.edge = edge
	p.scheduled = nil
	if !p.driven {
		p.level = p.pull == gpio.PullUp
	}
	for {
		select {
		case <-p.edges:
		default:
			return nil
		}
	}
}

// Read implements gpio.PinIn.
func (p *Pin) Read() gpio.Level {
	p.mu.Lock()
	f := p.levelFn
	l := p.level
	p.mu.Unlock()
	if f != nil {
		return f(time.Now())
	}
	return l
}

// WaitForEdge implements gpio.PinIn. A negative timeout waits forever (0
// too: the Linux ioctl driver treats 0 that way).
func (p *Pin) WaitForEdge(timeout time.Duration) bool {
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	for {
		var next <-chan time.Time
		var nt *time.Timer
		if at := p.due(time.Now()); !at.IsZero() {
			nt = time.NewTimer(time.Until(at))
			next = nt.C
		}
		stop := func() {
			if nt != nil {
				nt.Stop()
			}
		}
		select {
		case <-p.edges:
			stop()
			return true
		case <-p.halt:
			stop()
			return false
		case <-tc:
			stop()
			// Edges that came due while this goroutine was not running
			// are still delivered, as the kernel's queue would have them.
			p.due(time.Now())
			select {
			case <-p.edges:
				return true
			default:
				return false
			}
		case <-next:
		}
	}
}

// Pull implements gpio.PinIn.
func (p *Pin) Pull() gpio.Pull {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pull
}

// DefaultPull implements gpio.PinIn.
func (p *Pin) DefaultPull() gpio.Pull { return gpio.Float }

// Out implements gpio.PinOut.
func (p *Pin) Out(l gpio.Level) error {
	now := time.Now()
	p.mu.Lock()
	if p.busy {
		p.mu.Unlock()
		return ErrBusy
	}
	p.output = true
	p.level = l
	ws := slices.Clone(p.watchers)
	p.mu.Unlock()
	for _, w := range ws {
		w.f(l, now)
	}
	return nil
}

// PWM implements gpio.PinOut; the simulated line has no PWM.
func (p *Pin) PWM(gpio.Duty, physic.Frequency) error {
	return errors.New("gpiosim: PWM not supported")
}

var _ gpio.PinIO = (*Pin)(nil)
var _ pin.PinFunc = (*Pin)(nil)
