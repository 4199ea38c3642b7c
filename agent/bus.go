package agent

import (
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Interrupt is one thing that wakes the loop: an event, or a command that
// someone is waiting on.
type Interrupt struct {
	Event   worldmodel.Event
	Command *Command // nil for plain events
	// Repeats counts events coalesced into this one while it waited.
	Repeats int

	reply    chan Outcome
	enqueued time.Time
}

// Priority of the interrupt (the event's priority).
func (it *Interrupt) Priority() worldmodel.Priority { return it.Event.Priority }

// BusStats is what the bus reports in agent.status.
type BusStats struct {
	Queued    int    `json:"queued"`
	Capacity  int    `json:"capacity"`
	Dropped   uint64 `json:"dropped"`
	Coalesced uint64 `json:"coalesced"`
}

// Bus is a bounded priority queue of interrupts. Repeats of the same
// source/kind coalesce into the waiting entry (a motion sensor firing ten
// times while the agent is busy is one thing to handle, not ten). When full,
// the oldest entry of the lowest priority makes room for a more urgent one;
// otherwise the newcomer is dropped. Both are counted.
type Bus struct {
	mu        sync.Mutex
	queues    [worldmodel.Critical + 1][]*Interrupt
	byKey     map[string]*Interrupt
	n, cap    int
	dropped   uint64
	coalesced uint64
	notify    chan struct{}
	clock     clock.Clock // stamps when an interrupt was queued
}

// NewBus makes a bus holding at most capacity interrupts.
func NewBus(capacity int, c clock.Clock) *Bus {
	if capacity < 1 {
		capacity = 1
	}
	return &Bus{byKey: map[string]*Interrupt{}, cap: capacity, notify: make(chan struct{}, 1), clock: clock.Or(c)}
}

func clampPriority(p worldmodel.Priority) worldmodel.Priority {
	return min(max(p, worldmodel.Low), worldmodel.Critical)
}

// Push queues an interrupt without blocking. It reports false when the
// interrupt was dropped (a waiting command then gets ErrDropped).
func (b *Bus) Push(it *Interrupt) bool {
	it.Event.Priority = clampPriority(it.Event.Priority)
	it.enqueued = b.clock.Now()
	b.mu.Lock()
	if it.Command == nil {
		key := it.Event.Key()
		if old, ok := b.byKey[key]; ok && old.Event.Priority == it.Event.Priority {
			old.Event = it.Event
			old.Repeats++
			b.coalesced++
			b.mu.Unlock()
			b.signal()
			return true
		}
	}
	var victim *Interrupt
	if b.n >= b.cap {
		victim = b.evictLocked(it.Event.Priority)
		if victim == nil {
			b.dropped++
			b.mu.Unlock()
			it.fail(ErrDropped)
			return false
		}
	}
	p := it.Event.Priority
	b.queues[p] = append(b.queues[p], it)
	b.n++
	if it.Command == nil {
		b.byKey[it.Event.Key()] = it
	}
	b.mu.Unlock()
	if victim != nil {
		victim.fail(ErrDropped)
	}
	b.signal()
	return true
}

// evictLocked removes the oldest entry of the lowest priority below p.
func (b *Bus) evictLocked(p worldmodel.Priority) *Interrupt {
	for q := worldmodel.Low; q < p; q++ {
		if len(b.queues[q]) > 0 {
			v := b.queues[q][0]
			b.queues[q] = b.queues[q][1:]
			b.forgetLocked(v)
			b.n--
			b.dropped++
			return v
		}
	}
	return nil
}

func (b *Bus) forgetLocked(it *Interrupt) {
	if it.Command == nil && b.byKey[it.Event.Key()] == it {
		delete(b.byKey, it.Event.Key())
	}
}

func (b *Bus) signal() {
	select {
	case b.notify <- struct{}{}:
	default:
	}
}

// Pop takes the most urgent interrupt, oldest first within a priority.
func (b *Bus) Pop() (*Interrupt, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for p := worldmodel.Critical; p >= worldmodel.Low; p-- {
		if q := b.queues[p]; len(q) > 0 {
			it := q[0]
			q[0] = nil
			b.queues[p] = q[1:]
			b.forgetLocked(it)
			b.n--
			return it, true
		}
	}
	return nil, false
}

// Top returns the event of the most urgent waiting interrupt without
// taking it.
func (b *Bus) Top() (worldmodel.Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for p := worldmodel.Critical; p >= worldmodel.Low; p-- {
		if q := b.queues[p]; len(q) > 0 {
			return q[0].Event, true
		}
	}
	return worldmodel.Event{}, false
}

// Ready is signalled (level-triggered, capacity one) after each Push.
func (b *Bus) Ready() <-chan struct{} { return b.notify }

// Stats reports queue depth, drops and coalesced repeats.
func (b *Bus) Stats() BusStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BusStats{Queued: b.n, Capacity: b.cap, Dropped: b.dropped, Coalesced: b.coalesced}
}

// drain fails every waiting command; used at shutdown.
func (b *Bus) drain(err error) {
	for {
		it, ok := b.Pop()
		if !ok {
			return
		}
		it.fail(err)
	}
}

func (it *Interrupt) fail(err error) {
	it.deliver(Outcome{Err: err})
}

func (it *Interrupt) deliver(o Outcome) {
	if it.reply != nil {
		it.reply <- o // buffered, capacity one, written once
	}
}
