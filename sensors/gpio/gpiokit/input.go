package gpiokit

import (
	"context"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/gpio/gpiosim"
	"github.com/edgeagent/edgeagent/worldmodel"
	"periph.io/x/conn/v3/gpio"
)

// Debounce says how a contact's bounce is filtered.
type Debounce struct {
	// Period a line must be quiet before its level counts.
	Period time.Duration
	// Leading acts on the first edge at once and only then ignores the
	// bounce, instead of waiting for the line to settle: for an e-stop, a
	// false stop is safe and a stop delayed by the debounce is not.
	Leading bool
}

// Input is a digital input with debounce, run as a sensor.
type Input struct {
	Cfg       sensors.Config
	Role      string // pin role, e.g. "signal"
	Pull      gpio.Pull
	ActiveLow bool
	Debounce  Debounce
	// Warmup ignores the line for this long after start (a PIR module
	// fires at random while it settles, about a minute after power-up).
	Warmup        time.Duration
	Backoff       sensors.Backoff
	FaultPriority worldmodel.Priority
	// Poll is the polling period when the line has no edge detection
	// (5 ms when 0).
	Poll time.Duration
	// Change is called with the debounced state: once at start (initial
	// true) and at every change, with the time of the first edge.
	Change func(out sensors.Sink, active bool, at time.Time, initial bool)
	// Fault, if set, is called when the input becomes unusable (once per
	// episode, not on every retry).
	Fault func(out sensors.Sink, err error)
	// Sim starts driving the simulated line on platform sim; Run calls
	// the returned stop when it ends.
	Sim func(p *gpiosim.Pin) (stop func())
}

// Name implements sensors.Sensor.
func (in *Input) Name() string { return in.Cfg.Name }

// Run implements sensors.Sensor. Its warm-up, retries and the times of
// the changes it reports are on the config's clock.
func (in *Input) Run(ctx context.Context, out sensors.Sink) error {
	if in.Cfg.Platform == "sim" && in.Sim != nil {
		defer in.Sim(gpiosim.Shared(in.Cfg.Pins[in.Role]))()
	}
	clk := clock.Or(in.Cfg.Clock)
	h := sensors.NewHealth(clk, in.Cfg.Name, out, in.FaultPriority)
	start := clk.Now()
	return sensors.Supervise(ctx, h, in.Backoff, func(ctx context.Context) error {
		err := in.session(ctx, clk, out, h, start)
		if err != nil && ctx.Err() == nil && in.Fault != nil && !h.Degraded() {
			in.Fault(out, err)
		}
		return err
	})
}

func (in *Input) session(ctx context.Context, clk clock.Clock, out sensors.Sink, h *sensors.Health, start time.Time) error {
	p, err := OpenPin(in.Cfg, in.Role)
	if err != nil {
		return err
	}
	defer p.Halt() // also when configuring it failed: release the line
	w, err := NewWatcher(clk, p, in.Pull, in.Debounce, in.Poll)
	if err != nil {
		return fmt.Errorf("pin %s: %w", in.Cfg.Pins[in.Role], err)
	}
	h.OK()
	if wait := in.Warmup - clk.Since(start); wait > 0 {
		if clock.Sleep(ctx, clk, wait) != nil {
			return nil
		}
		w.Resync()
	}
	active := func(l gpio.Level) bool { return bool(l) != in.ActiveLow }
	in.Change(out, active(w.Level()), clk.Now(), true)
	for {
		l, at, err := w.Next(ctx)
		if err != nil {
			return nil // ctx ended
		}
		in.Change(out, active(l), at, false)
	}
}

// Watcher turns a line's edges into debounced level changes. A line with
// edge detection waits for its edges on the device's (the kernel's) time;
// a polled line is polled on the watcher's clock. Either way, a change is
// dated on that clock.
type Watcher struct {
	clock  clock.Clock
	p      gpio.PinIn
	d      Debounce
	poll   time.Duration
	polled bool
	stable gpio.Level
	last   gpio.Level // last level seen while polling
	settle bool       // leading mode: the bounce after the last change is still to be swallowed
}

// NewWatcher configures p as an input with edge detection on both edges,
// or, where the line cannot detect edges, for polling; clk (nil: the wall
// clock) dates the changes and times the polls.
func NewWatcher(clk clock.Clock, p gpio.PinIn, pull gpio.Pull, d Debounce, poll time.Duration) (*Watcher, error) {
	if poll <= 0 {
		poll = 5 * time.Millisecond
	}
	w := &Watcher{clock: clock.Or(clk), p: p, d: d, poll: poll}
	if err := p.In(pull, gpio.BothEdges); err != nil {
		if err2 := p.In(pull, gpio.NoEdge); err2 != nil {
			return nil, err
		}
		w.polled = true
	}
	w.Resync()
	return w, nil
}

// Resync takes the line's current level as the debounced level.
func (w *Watcher) Resync() {
	w.stable = w.p.Read()
	w.last = w.stable
}

// Level is the debounced level.
func (w *Watcher) Level() gpio.Level { return w.stable }

// waitEdge waits up to timeout for an edge.
func (w *Watcher) waitEdge(timeout time.Duration) bool {
	if !w.polled {
		// Never 0 or -1: periph's Linux ioctl driver waits forever on 0
		// and not at all on -1, unlike the documented contract.
		return w.p.WaitForEdge(max(timeout, time.Millisecond))
	}
	deadline := w.clock.Now().Add(timeout)
	for {
		if l := w.p.Read(); l != w.last {
			w.last = l
			return true
		}
		left := deadline.Sub(w.clock.Now())
		if left <= 0 {
			return false
		}
		t := w.clock.NewTimer(min(w.poll, left))
		<-t.C()
	}
}

// quiet waits until the line has had no edge for the debounce period. A
// line that keeps toggling for 20 periods is taken as it is then.
func (w *Watcher) quiet() {
	if w.d.Period <= 0 {
		return
	}
	for range 20 {
		if !w.waitEdge(w.d.Period) {
			return
		}
	}
}

// Next returns the next debounced level change and the time of the edge
// that started it, or ctx's error when ctx ends.
func (w *Watcher) Next(ctx context.Context) (gpio.Level, time.Time, error) {
	// Halt interrupts a blocked WaitForEdge when ctx ends.
	stop := context.AfterFunc(ctx, func() {
		if h, ok := w.p.(interface{ Halt() error }); ok {
			h.Halt()
		}
	})
	defer stop()
	if w.settle {
		// The change was reported on its first edge; now let the contact
		// settle, and report at once if it settled back.
		w.settle = false
		w.quiet()
		if l := w.p.Read(); l != w.stable {
			w.stable = l
			return l, w.clock.Now(), nil
		}
	}
	for ctx.Err() == nil {
		if !w.waitEdge(250 * time.Millisecond) {
			continue
		}
		at := w.clock.Now()
		if w.d.Leading {
			// An edge means the line left its stable level, even if it has
			// bounced back by the time it can be read: report the change
			// now and let the settle step report a return.
			w.stable = !w.stable
			w.settle = true
			return w.stable, at, nil
		}
		w.quiet()
		if l := w.p.Read(); l != w.stable {
			w.stable = l
			return l, at, nil
		}
	}
	return w.stable, time.Time{}, ctx.Err()
}
