package lograte

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestOnceASecond(t *testing.T) {
	var l Limit
	t0 := time.Unix(1_000_000, 0)
	for i, c := range []struct {
		at   time.Duration
		want bool
	}{{0, true}, {10 * time.Millisecond, false}, {999 * time.Millisecond, false}, {time.Second, true}, {1500 * time.Millisecond, false}, {3 * time.Second, true}} {
		if got := l.Allow(t0.Add(c.at)); got != c.want {
			t.Errorf("%d: Allow(+%v) = %v", i, c.at, got)
		}
	}
}

// Many goroutines at the same instant: exactly one is let through.
func TestOneOfMany(t *testing.T) {
	var l Limit
	var n atomic.Int32
	var wg sync.WaitGroup
	at := time.Unix(2_000_000, 0)
	for range 50 {
		wg.Go(func() {
			if l.Allow(at) {
				n.Add(1)
			}
		})
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Fatalf("%d let through", n.Load())
	}
}
