// Package clock is edgeagent's time source. Servo ramps, dead-man timers,
// rate limits, the agent's heartbeat, the stream's time stamps and replays
// read it, so tests drive them with a Fake clock step by step instead of
// sleeping and hoping, and a replay runs on virtual time. Code outside a
// short list (internal/layout's clock rule) never calls time.Now or makes a timer
// itself.
package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// Since is Now().Sub(t); on the wall clock it reads only the monotonic
	// clock when t has a monotonic reading (half the cost of Now).
	Since(t time.Time) time.Duration
	NewTimer(d time.Duration) Timer
	// NewTicker fires every d; like time.Ticker it drops ticks a slow
	// receiver did not take.
	NewTicker(d time.Duration) Timer
	// AfterFunc calls f after d: the wall clock in its own goroutine, a
	// Fake in Advance's (see Fake.Advance). The Timer's C is nil.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is the part of *time.Timer and *time.Ticker edgeagent uses.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped a
	// pending timer.
	Stop() bool
	// Reset re-arms the timer to fire after d (a ticker: every d).
	Reset(d time.Duration)
}

// Sleep waits for d on c or until ctx ends (then it returns ctx.Err()).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C():
		return nil
	}
}

// Or returns c, or the wall clock when c is nil: the default of a part
// whose config leaves the clock out.
func Or(c Clock) Clock {
	if c == nil {
		return Real()
	}
	return c
}

// Real is the wall clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time                  { return time.Now() }
func (realClock) Since(t time.Time) time.Duration { return time.Since(t) }
func (realClock) NewTimer(d time.Duration) Timer {
	t := time.NewTimer(d)
	return realTimer{t: t, c: t.C}
}
func (realClock) NewTicker(d time.Duration) Timer { return realTicker{time.NewTicker(d)} }
func (realClock) AfterFunc(d time.Duration, f func()) Timer {
	return realTimer{t: time.AfterFunc(d, f)}
}

type realTimer struct {
	t *time.Timer
	c <-chan time.Time
}

func (r realTimer) C() <-chan time.Time   { return r.c }
func (r realTimer) Stop() bool            { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }

// Stop reports true: a running ticker always has a tick pending.
func (r realTicker) Stop() bool            { r.t.Stop(); return true }
func (r realTicker) Reset(d time.Duration) { r.t.Reset(d) }

// Fake is a clock that moves only when Advance is called. Timers fire in
// deadline order during Advance; their channels are buffered (size 1), so a
// fire is never lost while the receiving goroutine is busy. AfterFunc's f is
// called by Advance itself, so what it does (a deadline ending a context:
// WithTimeout) has happened when Advance returns.
type Fake struct {
	mu      sync.Mutex
	cond    *sync.Cond
	now     time.Time
	pending []*fakeTimer
}

// NewFake starts a fake clock at t.
func NewFake(t time.Time) *Fake {
	f := &Fake{now: t}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Since is the fake time elapsed since t.
func (f *Fake) Since(t time.Time) time.Duration { return f.Now().Sub(t) }

// NewTimer makes a timer that fires when the fake time reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// NewTicker makes a ticker that fires at now+d, now+2d, … as the fake time
// passes them.
func (f *Fake) NewTicker(d time.Duration) Timer {
	if d <= 0 {
		panic("clock: non-positive interval for NewTicker")
	}
	t := &fakeTimer{f: f, c: make(chan time.Time, 1), every: d}
	t.Reset(d)
	return t
}

// AfterFunc calls f when the fake time reaches now+d: Advance calls it, in
// deadline order with the other timers, without holding the clock (f may
// stop or make timers). f must not wait for the clock to move. A d <= 0
// calls f at once in its own goroutine, as time.AfterFunc does.
func (f *Fake) AfterFunc(d time.Duration, fn func()) Timer {
	t := &fakeTimer{f: f, fn: fn}
	t.Reset(d)
	return t
}

// Advance moves the time forward by d, firing every timer whose deadline
// is reached, in deadline order, each at its own deadline. It is meant for
// one goroutine (the test's, the replay's driver).
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	end := f.now.Add(d)
	for {
		sort.SliceStable(f.pending, func(i, j int) bool { return f.pending[i].at.Before(f.pending[j].at) })
		if len(f.pending) == 0 || f.pending[0].at.After(end) {
			break
		}
		t := f.pending[0]
		f.pending = f.pending[1:]
		f.now = t.at
		if t.fn != nil {
			f.mu.Unlock()
			t.fn()
			f.mu.Lock()
			continue
		}
		t.fire()
		if t.every > 0 {
			t.at = t.at.Add(t.every)
			f.pending = append(f.pending, t)
		}
	}
	f.now = end
	f.cond.Broadcast()
	f.mu.Unlock()
}

// Next is when the earliest armed timer fires; false when none is armed.
// A replay steps to it when it must see what a deadline ends before it
// goes on.
func (f *Fake) Next() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.pending) == 0 {
		return time.Time{}, false
	}
	next := f.pending[0].at
	for _, t := range f.pending[1:] {
		if t.at.Before(next) {
			next = t.at
		}
	}
	return next, true
}

// Pending is the number of armed timers.
func (f *Fake) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}

// BlockUntil waits until at least n timers are armed: the goroutines under
// test have reached the point where they wait for time to pass.
func (f *Fake) BlockUntil(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.pending) < n {
		f.cond.Wait()
	}
}

type fakeTimer struct {
	f     *Fake
	c     chan time.Time
	fn    func()        // AfterFunc's
	every time.Duration // a ticker's period
	at    time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

// fire delivers one deadline; f.mu is held, so an AfterFunc's f (a d <= 0
// in Reset) runs in its own goroutine.
func (t *fakeTimer) fire() {
	if t.fn != nil {
		go t.fn()
		return
	}
	select {
	case t.c <- t.at:
	default:
	}
}

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	return t.remove()
}

func (t *fakeTimer) remove() bool {
	for i, p := range t.f.pending {
		if p == t {
			t.f.pending = append(t.f.pending[:i], t.f.pending[i+1:]...)
			return true
		}
	}
	return false
}

func (t *fakeTimer) Reset(d time.Duration) {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.remove()
	// Drain a fire that was not received, as time.Timer.Reset does since
	// Go 1.23: after Reset, only the new deadline fires.
	select {
	case <-t.c:
	default:
	}
	if t.every > 0 {
		if d <= 0 {
			panic("clock: non-positive interval for Ticker.Reset")
		}
		t.every = d
	}
	t.at = t.f.now.Add(d)
	if d <= 0 {
		t.fire()
		return
	}
	t.f.pending = append(t.f.pending, t)
	t.f.cond.Broadcast()
}
