package plugin

import (
	"context"
	"sync"
)

// Workers owns a plugin's goroutines between OnAgentStart and
// OnAgentStop: Start begins a run, Go runs a goroutine with the run's
// context, Stop ends the context and waits for every one of them. The zero
// value is ready; a plugin may be started again after Stop.
type Workers struct {
	mu     sync.Mutex
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Start begins a run.
func (w *Workers) Start() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ctx, w.cancel = context.WithCancel(context.Background())
}

// Go runs fn on a goroutine with the run's context and reports whether it
// did: outside a run (before Start, once Stop began) it runs nothing.
func (w *Workers) Go(fn func(ctx context.Context)) bool {
	w.mu.Lock()
	defer w.mu.Unlock() // held across Add: no Add after Stop's Wait began
	if w.ctx == nil || w.ctx.Err() != nil {
		return false
	}
	w.wg.Add(1)
	go func(ctx context.Context) {
		defer w.wg.Done()
		fn(ctx)
	}(w.ctx)
	return true
}

// Stop ends the run's context and waits for the goroutines Go started.
func (w *Workers) Stop() {
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
	}
	w.mu.Unlock()
	w.wg.Wait()
}
