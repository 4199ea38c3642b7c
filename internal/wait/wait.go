// Package wait is the wait for a shutdown's goroutines. (The one sleep is
// clock.Sleep: it waits on a clock.)
package wait

import (
	"context"
	"sync"
)

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
