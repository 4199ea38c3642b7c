package wait

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestGroupEnds(t *testing.T) {
	var g Group
	g.Add(1)
	go func() { time.Sleep(time.Millisecond); g.Done() }()
	if err := g.Wait(context.Background()); err != nil {
		t.Fatalf("a group that ends: %v", err)
	}
}

func TestGroupStillRunning(t *testing.T) {
	var g Group
	g.Add(1)
	defer g.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := g.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a group still running: %v", err)
	}
}

// A stop whose grace an earlier step used up waits with a context that has
// already ended: an empty or finished group is done all the same. (The
// goroutine-and-select wait this replaced picked the context about half
// the time, and the actuators reported "a write is hanging" when none
// was.) Many rounds, because that failure was a coin toss per call.
func TestGroupDoneWhenContextAlreadyEnded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 1000 {
		var empty Group
		if err := empty.Wait(ctx); err != nil {
			t.Fatalf("round %d: an empty group: %v", i, err)
		}
		var finished Group
		finished.Add(2)
		finished.Done()
		finished.Done()
		if err := finished.Wait(ctx); err != nil {
			t.Fatalf("round %d: a finished group: %v", i, err)
		}
		var running Group
		running.Add(1)
		if err := running.Wait(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("round %d: a running group: %v", i, err)
		}
		running.Done()
	}
}

// A group can be reused: after it empties, a new Add makes Wait wait again.
func TestGroupReused(t *testing.T) {
	var g Group
	g.Add(1)
	g.Done()
	g.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := g.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("running again: %v", err)
	}
	g.Done()
	if err := g.Wait(ctx); err != nil {
		t.Fatalf("finished again: %v", err)
	}
}

func TestGroupNegativePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Done on an empty group did not panic")
		}
	}()
	var g Group
	g.Done()
}
