package clock

import (
	"context"
	"sync"
	"time"
)

// WithTimeout is context.WithTimeout on the clock c: the returned context
// ends d after c's now, when c's timer says so, so a replay's virtual clock
// ends an agent cycle or an LLM call at the recorded moment. Once the
// deadline has passed, Err is context.DeadlineExceeded, as is
// context.Cause, and so are the Err of the contexts made from it (as with
// a context of the context package): a deadline reads the same, and says
// the same in error texts, on either clock. The cancel func releases the
// timer and the link to parent; call it as soon as the work is done.
//
// Deadline reports the parent's deadline, not this one: its time is on c,
// which need not be the wall clock, and whoever reads a context's Deadline
// (net's dialer, net/http) takes it for a wall-clock time. A virtual
// deadline in the wall clock's past would fail a dial at once, one in its
// future would be a wall timeout the replay does not control. Done is the
// only signal, on both clocks, so live and replayed runs take the same
// path.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	cause, setCause := context.WithCancelCause(parent)
	x := &timeoutCtx{parent: parent, cause: cause, setCause: setCause, done: make(chan struct{})}
	if parent.Err() != nil {
		x.end(parent.Err(), context.Cause(parent))
		return x, func() {}
	}
	if d <= 0 {
		x.end(context.DeadlineExceeded, context.DeadlineExceeded)
		return x, func() {}
	}
	// Registered before the timer, so that end always finds stopParent
	// set: end runs once, under mu, and a timer that fires at once waits
	// for the lock.
	x.mu.Lock()
	// The parent's cause is read, not left to cause's own link to the
	// parent: this may run before the parent has reached cause.
	x.stopParent = context.AfterFunc(parent, func() { x.end(parent.Err(), context.Cause(parent)) })
	x.timer = c.AfterFunc(d, func() { x.end(context.DeadlineExceeded, context.DeadlineExceeded) })
	x.mu.Unlock()
	return x, func() { x.end(context.Canceled, context.Canceled) }
}

// timeoutCtx is WithTimeout's context. Done is its own channel, and it
// implements AfterFunc, so contexts made from it (context.WithCancel …)
// are ended by it directly, with its Err (not through the context
// package's cancelCtx, which would give them context.Canceled). Value goes
// through cause, a cancelCtx of the context package that carries the
// cause for context.Cause. The parent's end reaches it through
// context.AfterFunc, in a goroutine of its own: Done closes a moment after
// the parent's (context.Cause reads the parent's cause at once).
type timeoutCtx struct {
	parent   context.Context
	cause    context.Context
	setCause context.CancelCauseFunc
	done     chan struct{}

	mu         sync.Mutex
	err        error
	timer      Timer
	stopParent func() bool
	after      map[*func()]struct{} // AfterFunc's, until the context ends
}

func (x *timeoutCtx) Deadline() (time.Time, bool) { return x.parent.Deadline() }
func (x *timeoutCtx) Done() <-chan struct{}       { return x.done }
func (x *timeoutCtx) Value(key any) any           { return x.cause.Value(key) }

func (x *timeoutCtx) Err() error {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.err
}

// end ends the context with err and cause (unless the parent's end
// reached cause first) and releases what it holds. Only the first call
// counts.
func (x *timeoutCtx) end(err, cause error) {
	x.mu.Lock()
	if x.err != nil {
		x.mu.Unlock()
		return
	}
	x.err = err
	x.setCause(cause)
	if x.timer != nil {
		x.timer.Stop()
	}
	if x.stopParent != nil {
		x.stopParent()
	}
	after := x.after
	x.after = nil
	close(x.done)
	x.mu.Unlock()
	// Children end before end returns, as a cancelCtx's do: whoever sees
	// this context end and looks at a child finds it ended too.
	for f := range after {
		(*f)()
	}
}

// AfterFunc calls f once the context has ended (at once, in its own
// goroutine, when it has already); stop unregisters f and reports whether
// it did so before f was called. The context package uses it to end the
// contexts made from this one.
func (x *timeoutCtx) AfterFunc(f func()) (stop func() bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.err != nil {
		go f()
		return func() bool { return false }
	}
	if x.after == nil {
		x.after = map[*func()]struct{}{}
	}
	key := &f
	x.after[key] = struct{}{}
	return func() bool {
		x.mu.Lock()
		defer x.mu.Unlock()
		_, ok := x.after[key]
		delete(x.after, key)
		return ok
	}
}

func (x *timeoutCtx) String() string { return "clock.WithTimeout" }
