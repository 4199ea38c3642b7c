package worldmodel

import (
	"sync"
	"sync/atomic"
)

// waker tells waiting consumers that the model changed. A consumer asks for
// a channel; the next change closes it. While nobody waits, a change costs
// one atomic load, so the append path stays as cheap as before consumers
// existed.
type waker struct {
	armed atomic.Bool
	mu    sync.Mutex
	ch    chan struct{}
}

// wait returns a channel closed at the next change.
func (w *waker) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	w.armed.Store(true)
	return w.ch
}

func (w *waker) signal() {
	if !w.armed.Load() {
		return
	}
	w.mu.Lock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
	w.armed.Store(false)
	w.mu.Unlock()
}
