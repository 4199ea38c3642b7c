// Package wait is the wait for a shutdown's goroutines. (The one sleep is
// clock.Sleep: it waits on a clock.)
package wait

import (
	"context"
	"sync"
)

// Group counts running goroutines, as sync.WaitGroup does, and its Wait
// is bounded by a context. Unlike waiting for a sync.WaitGroup in a
// goroutine and selecting on that and the context, a group that has
// finished (or never started anything) reports done even when the context
// has already ended: a stop that ran out of its grace in an earlier step
// must not blame this one for a hang it does not have. The zero Group is
// empty and ready to use; a Group must not be copied after first use.
type Group struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n falls to 0; made only when someone waits
}

// Add adds delta, which may be negative, to the count of running
// goroutines. The count going below zero panics, as sync.WaitGroup's does.
// It costs a mutex, not an allocation: it runs once per command.
func (g *Group) Add(delta int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n += delta
	switch {
	case g.n < 0:
		panic("wait: negative Group counter")
	case g.n == 0 && g.idle != nil:
		close(g.idle)
		g.idle = nil
	}
}

// Done marks one goroutine finished.
func (g *Group) Done() { g.Add(-1) }

// Wait returns nil once the count is zero, or ctx.Err() if ctx ends first
// with goroutines still running. It starts no goroutine.
func (g *Group) Wait(ctx context.Context) error {
	g.mu.Lock()
	if g.n == 0 {
		g.mu.Unlock()
		return nil
	}
	if g.idle == nil {
		g.idle = make(chan struct{})
	}
	idle := g.idle
	g.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		// Both may be ready at once, and select picks at random: the
		// count decides.
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.n == 0 {
			return nil
		}
		return ctx.Err()
	}
}

// Running is how many goroutines are running now, for a message.
func (g *Group) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.n
}
