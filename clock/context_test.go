package clock

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

func ended(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return true
	default:
		return false
	}
}

// The deadline is the clock's: nothing before Advance reaches it, and when
// Advance returns the context and those made from it have ended (or are
// ending) with
// context.DeadlineExceeded, as the context package's would.
func TestWithTimeoutEndsOnTheClock(t *testing.T) {
	f := NewFake(t0)
	ctx, cancel := WithTimeout(context.Background(), f, time.Second)
	defer cancel()
	child, cancelChild := context.WithCancel(ctx)
	defer cancelChild()
	grand, cancelGrand := WithTimeout(child, f, time.Hour)
	defer cancelGrand()
	if _, ok := ctx.Deadline(); ok {
		t.Fatal("Deadline reported a time on the fake clock")
	}
	f.Advance(999 * time.Millisecond)
	if ended(ctx) || ctx.Err() != nil || ended(child) {
		t.Fatal("ended before its deadline")
	}
	f.Advance(time.Millisecond)
	if !ended(ctx) || !ended(child) {
		t.Fatal("not ended when Advance returned")
	}
	// One made under a child of the context package's hears of it through
	// context.AfterFunc, in a goroutine of its own.
	<-grand.Done()
	for name, c := range map[string]context.Context{"context": ctx, "child": child, "grandchild": grand} {
		if !errors.Is(c.Err(), context.DeadlineExceeded) || context.Cause(c) != context.DeadlineExceeded {
			t.Fatalf("%s: Err %v, Cause %v", name, c.Err(), context.Cause(c))
		}
		if c.Err().Error() != "context deadline exceeded" {
			t.Fatalf("%s: Err says %q", name, c.Err())
		}
	}
	if f.Pending() != 0 {
		t.Fatalf("%d timers left", f.Pending())
	}
}

// Cancelling releases the timer; the context ends as cancelled and stays
// so past the deadline.
func TestWithTimeoutCancelStopsTheTimer(t *testing.T) {
	f := NewFake(t0)
	ctx, cancel := WithTimeout(context.Background(), f, time.Second)
	if f.Pending() != 1 {
		t.Fatalf("pending %d", f.Pending())
	}
	cancel()
	cancel()
	if f.Pending() != 0 || !ended(ctx) || ctx.Err() != context.Canceled {
		t.Fatalf("after cancel: pending %d, err %v", f.Pending(), ctx.Err())
	}
	f.Advance(time.Hour)
	if ctx.Err() != context.Canceled {
		t.Fatalf("after the deadline: %v", ctx.Err())
	}
}

// The parent's end reaches the context with the parent's cause and
// releases its timer; a cause given after the deadline does not rewrite
// why the context ended.
func TestWithTimeoutFollowsItsParent(t *testing.T) {
	f := NewFake(t0)
	why := errors.New("preempted")
	parent, cancelParent := context.WithCancelCause(context.Background())
	ctx, cancel := WithTimeout(parent, f, time.Second)
	defer cancel()
	cancelParent(why)
	<-ctx.Done()
	if ctx.Err() != context.Canceled || context.Cause(ctx) != why || f.Pending() != 0 {
		t.Fatalf("Err %v, Cause %v, pending %d", ctx.Err(), context.Cause(ctx), f.Pending())
	}

	parent, cancelParent = context.WithCancelCause(context.Background())
	ctx, cancel = WithTimeout(parent, f, time.Second)
	defer cancel()
	f.Advance(time.Second)
	cancelParent(why)
	if context.Cause(ctx) != context.DeadlineExceeded || ctx.Err() != context.DeadlineExceeded {
		t.Fatalf("Err %v, Cause %v", ctx.Err(), context.Cause(ctx))
	}

	// However the parent's end reaches the context first (its cancelCtx,
	// or the AfterFunc's goroutine), the cause is the parent's.
	for range 2000 {
		parent, cancelParent := context.WithCancelCause(context.Background())
		ctx, cancel := WithTimeout(parent, f, time.Second)
		cancelParent(why)
		<-ctx.Done()
		if context.Cause(ctx) != why {
			t.Fatalf("Cause %v, want the parent's", context.Cause(ctx))
		}
		cancel()
	}

	// An ended parent, or no time left: ended at once.
	ctx, _ = WithTimeout(parent, f, time.Second)
	if !ended(ctx) || context.Cause(ctx) != why {
		t.Fatalf("under an ended parent: %v", context.Cause(ctx))
	}
	ctx, _ = WithTimeout(context.Background(), f, 0)
	if !ended(ctx) || ctx.Err() != context.DeadlineExceeded || f.Pending() != 0 {
		t.Fatalf("no time: %v", ctx.Err())
	}
}

// An outer deadline ends an inner, longer one, as with the context
// package.
func TestWithTimeoutNested(t *testing.T) {
	f := NewFake(t0)
	outer, cancelOuter := WithTimeout(context.Background(), f, time.Second)
	defer cancelOuter()
	inner, cancelInner := WithTimeout(outer, f, time.Minute)
	defer cancelInner()
	f.Advance(time.Second)
	<-inner.Done()
	if inner.Err() != context.DeadlineExceeded || context.Cause(inner) != context.DeadlineExceeded {
		t.Fatalf("Err %v, Cause %v", inner.Err(), context.Cause(inner))
	}
	if f.Pending() != 0 {
		t.Fatalf("%d timers left", f.Pending())
	}
}

// Many contexts under one long-lived parent leave nothing behind once
// cancelled: no goroutine, no timer, no link from the parent (a context
// made from the parent afterwards is alone: cancelling the parent ends
// only it).
func TestWithTimeoutLeavesNothing(t *testing.T) {
	f := NewFake(t0)
	parent, cancelParent := context.WithCancel(context.Background())
	defer cancelParent()
	before := runtime.NumGoroutine()
	for range 1000 {
		ctx, cancel := WithTimeout(parent, f, time.Second)
		child, cancelChild := context.WithCancel(ctx)
		cancel()
		<-child.Done()
		cancelChild()
	}
	if n := runtime.NumGoroutine(); n > before+10 {
		t.Fatalf("%d goroutines, %d before", n, before)
	}
	if f.Pending() != 0 {
		t.Fatalf("%d timers left", f.Pending())
	}
}

func TestWithTimeoutOnTheWallClock(t *testing.T) {
	ctx, cancel := WithTimeout(context.Background(), Real(), time.Millisecond)
	defer cancel()
	<-ctx.Done()
	if ctx.Err() != context.DeadlineExceeded {
		t.Fatal(ctx.Err())
	}
}

func TestFakeNext(t *testing.T) {
	f := NewFake(t0)
	if _, ok := f.Next(); ok {
		t.Fatal("Next with no timer")
	}
	f.NewTimer(3 * time.Second)
	f.AfterFunc(time.Second, func() {})
	if next, ok := f.Next(); !ok || !next.Equal(t0.Add(time.Second)) {
		t.Fatalf("Next %v %v", next, ok)
	}
}
