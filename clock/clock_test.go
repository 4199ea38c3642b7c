package clock

import (
	"context"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func fired(t Timer) (time.Time, bool) {
	select {
	case at := <-t.C():
		return at, true
	default:
		return time.Time{}, false
	}
}

func TestFakeFiresInDeadlineOrderAtTheirDeadlines(t *testing.T) {
	f := NewFake(t0)
	late := f.NewTimer(3 * time.Second)
	early := f.NewTimer(time.Second)
	if f.Pending() != 2 {
		t.Fatalf("pending %d", f.Pending())
	}
	f.Advance(999 * time.Millisecond)
	if _, ok := fired(early); ok {
		t.Fatal("fired before its deadline")
	}
	f.Advance(5 * time.Second)
	if at, ok := fired(early); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("early fired %v %v", at, ok)
	}
	if at, ok := fired(late); !ok || !at.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("late fired %v %v", at, ok)
	}
	if !f.Now().Equal(t0.Add(5999*time.Millisecond)) || f.Pending() != 0 {
		t.Fatalf("now %v pending %d", f.Now(), f.Pending())
	}
}

func TestFakeStopAndReset(t *testing.T) {
	f := NewFake(t0)
	tm := f.NewTimer(time.Second)
	if !tm.Stop() || tm.Stop() {
		t.Fatal("Stop should report a pending timer once")
	}
	f.Advance(2 * time.Second)
	if _, ok := fired(tm); ok {
		t.Fatal("a stopped timer fired")
	}
	tm.Reset(time.Second) // from now (t0+2s)
	f.Advance(time.Second)
	if at, ok := fired(tm); !ok || !at.Equal(t0.Add(3*time.Second)) {
		t.Fatalf("reset timer fired %v %v", at, ok)
	}
	// A fire that was not received is dropped by Reset.
	tm.Reset(time.Second)
	f.Advance(time.Second)
	tm.Reset(time.Second)
	if _, ok := fired(tm); ok {
		t.Fatal("stale fire survived Reset")
	}
}

func TestBlockUntil(t *testing.T) {
	f := NewFake(t0)
	armed := make(chan struct{})
	go func() { f.BlockUntil(1); close(armed) }()
	select {
	case <-armed:
		t.Fatal("BlockUntil returned with no timer armed")
	case <-time.After(10 * time.Millisecond):
	}
	f.NewTimer(time.Second)
	<-armed
}

func TestReal(t *testing.T) {
	c := Real()
	tm := c.NewTimer(time.Millisecond)
	<-tm.C()
	if c.Now().IsZero() {
		t.Fatal("zero time")
	}
}

func TestFakeTickerDropsWhatNobodyTook(t *testing.T) {
	f := NewFake(t0)
	tk := f.NewTicker(time.Second)
	f.Advance(3500 * time.Millisecond) // ticks at 1, 2, 3 s: one is buffered
	if at, ok := fired(tk); !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("first tick %v %v", at, ok)
	}
	if _, ok := fired(tk); ok {
		t.Fatal("a tick nobody took was kept")
	}
	f.Advance(500 * time.Millisecond)
	if at, ok := fired(tk); !ok || !at.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("tick at 4 s: %v %v", at, ok)
	}
	tk.Reset(2 * time.Second)
	f.Advance(time.Second)
	if _, ok := fired(tk); ok {
		t.Fatal("reset ticker fired at its old period")
	}
	f.Advance(time.Second)
	if _, ok := fired(tk); !ok {
		t.Fatal("reset ticker did not fire at its new period")
	}
	if !tk.Stop() || f.Pending() != 0 {
		t.Fatalf("stop: pending %d", f.Pending())
	}
}

func TestFakeAfterFuncAndSleep(t *testing.T) {
	f := NewFake(t0)
	called := make(chan time.Time, 1)
	f.AfterFunc(time.Second, func() { called <- f.Now() })
	stopped := f.AfterFunc(time.Second, func() { t.Error("a stopped AfterFunc ran") })
	stopped.Stop()
	slept := make(chan error, 1)
	go func() { slept <- Sleep(context.Background(), f, 2*time.Second) }()
	f.BlockUntil(2) // the AfterFunc and the sleep
	f.Advance(time.Second)
	if at := <-called; !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("AfterFunc ran at %v", at)
	}
	select {
	case <-slept:
		t.Fatal("Sleep returned early")
	default:
	}
	f.Advance(time.Second)
	if err := <-slept; err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, f, time.Hour); err != context.Canceled {
		t.Fatalf("Sleep on a cancelled context: %v", err)
	}
}

func TestRealTickerAndAfterFunc(t *testing.T) {
	c := Or(nil)
	tk := c.NewTicker(time.Millisecond)
	<-tk.C()
	<-tk.C()
	tk.Stop()
	done := make(chan struct{})
	c.AfterFunc(time.Millisecond, func() { close(done) })
	<-done
}

// Waiting reaches the notice of the context it is given, and nothing
// without one.
func TestWaitingNotice(t *testing.T) {
	n := 0
	ctx := WithWaitNotice(context.Background(), func() { n++ })
	Waiting(ctx)
	Waiting(context.Background())
	if n != 1 {
		t.Fatalf("notices = %d, want 1", n)
	}
}
