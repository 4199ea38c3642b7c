package wakeword

import (
	"context"
	"sync"
)

// parallel calls f(i) for every i in [0, n) on workers goroutines and
// returns once every call has. Once ctx is done no further call starts,
// and ctx's error is returned. Callers write results into slots by i, so
// what they produce does not depend on the scheduling.
func parallel(ctx context.Context, n, workers int, f func(i int)) error {
	var wg sync.WaitGroup
	next := make(chan int)
	for range max(1, workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
feed:
	for i := range n {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return ctx.Err()
}
