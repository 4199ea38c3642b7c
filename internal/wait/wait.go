// Package wait is the runtime's context-aware waiting: the one sleep (the
// wait between a sensor's samples and retries, a replay keeping pace with
// the wall clock) and the wait for a shutdown's goroutines.
package wait

import (
	"context"
	"sync"
	"time"
)

// For waits for d or until ctx ends (then it returns ctx.Err()).
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Group waits until wg is done or ctx ends (then it returns ctx.Err() and
// leaves a goroutine waiting for wg).
func Group(ctx context.Context, wg *sync.WaitGroup) error {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
