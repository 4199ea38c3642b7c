// Package wait is the one context-aware sleep of the runtime: the wait
// between a sensor's samples and retries, and a replay keeping pace with the
// wall clock.
package wait

import (
	"context"
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
