package plugin

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestWorkers(t *testing.T) {
	var w Workers
	if w.Go(func(context.Context) { t.Error("ran before Start") }) {
		t.Fatal("Go before Start reported a goroutine")
	}
	w.Stop() // nothing started: returns at once
	var ended atomic.Int32
	for round := range 2 { // a plugin may be started again after Stop
		w.Start()
		for range 3 {
			if !w.Go(func(ctx context.Context) { <-ctx.Done(); ended.Add(1) }) {
				t.Fatalf("round %d: Go in a run ran nothing", round)
			}
		}
		w.Stop()
		if n := ended.Load(); n != int32(3*(round+1)) {
			t.Fatalf("round %d: Stop returned with %d goroutines ended", round, n)
		}
		if w.Go(func(context.Context) { t.Error("ran after Stop") }) {
			t.Fatal("Go after Stop reported a goroutine")
		}
	}
}

// Go racing Stop either runs its goroutine, which Stop then waits for, or
// runs nothing (run with -race).
func TestWorkersGoRacingStop(t *testing.T) {
	for range 100 {
		var w Workers
		w.Start()
		var started, ended atomic.Int32
		go w.Go(func(ctx context.Context) { started.Add(1); <-ctx.Done(); ended.Add(1) })
		w.Stop()
		if started.Load() != ended.Load() {
			t.Fatal("Stop returned before a goroutine Go started")
		}
	}
}
