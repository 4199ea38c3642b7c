// Package clock is edgeagent's time source. Servo ramps, dead-man timers,
// rate limits and replays read it, so tests drive them with a Fake clock
// step by step instead of sleeping and hoping, and a replay runs on virtual
// time.
package clock

import (
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer the actuators use.
type Timer interface {
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it stopped a
	// pending timer.
	Stop() bool
	// Reset re-arms the timer to fire after d.
	Reset(d time.Duration)
}

// Real is the wall clock.
func Real() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) NewTimer(d time.Duration) Timer {
	return realTimer{time.NewTimer(d)}
}

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Stop() bool            { return r.t.Stop() }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }

// Fake is a clock that moves only when Advance is called. Timers fire in
// deadline order during Advance; their channels are buffered (size 1), so a
// fire is never lost while the receiving goroutine is busy.
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

// NewTimer makes a timer that fires when the fake time reaches now+d.
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Advance moves the time forward by d, firing every timer whose deadline
// is reached, in deadline order, each at its own deadline.
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
		select {
		case t.c <- t.at:
		default:
		}
	}
	f.now = end
	f.cond.Broadcast()
	f.mu.Unlock()
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
	f  *Fake
	c  chan time.Time
	at time.Time
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

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
	t.at = t.f.now.Add(d)
	if d <= 0 {
		t.c <- t.at
		return
	}
	t.f.pending = append(t.f.pending, t)
	t.f.cond.Broadcast()
}
