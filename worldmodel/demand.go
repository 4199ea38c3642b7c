package worldmodel

import (
	"sync"
	"sync/atomic"
)

// Demand lets a consumer ask for a source that costs something to produce
// only while someone looks at it: the camera's live frames (a JPEG per
// frame) are encoded while a dashboard client watches and not at all when
// the page is closed. A producer asks Watched once per item (one map read
// under a read lock, nothing when the source was never watched); a
// consumer holds a Watch for as long as it looks.
type demand struct {
	mu      sync.RWMutex
	counts  map[string]*atomic.Int32
	anybody atomic.Int32 // watches held over all sources: the fast "nobody" path
}

// Watch says that a consumer wants source produced; the returned function
// (call it once) says it no longer does.
func (m *Model) Watch(source string) (stop func()) {
	d := &m.demand
	d.mu.Lock()
	if d.counts == nil {
		d.counts = map[string]*atomic.Int32{}
	}
	c := d.counts[source]
	if c == nil {
		c = new(atomic.Int32)
		d.counts[source] = c
	}
	d.mu.Unlock()
	c.Add(1)
	d.anybody.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			c.Add(-1)
			d.anybody.Add(-1)
		})
	}
}

// onDemand reports whether source was ever watched: it is produced on
// demand, not all the time.
func (m *Model) onDemand(source string) bool {
	d := &m.demand
	d.mu.RLock()
	defer d.mu.RUnlock()
	_, ok := d.counts[source]
	return ok
}

// Watched reports whether some consumer holds a Watch on source.
func (m *Model) Watched(source string) bool {
	d := &m.demand
	if d.anybody.Load() == 0 {
		return false
	}
	d.mu.RLock()
	c := d.counts[source]
	d.mu.RUnlock()
	return c != nil && c.Load() > 0
}
