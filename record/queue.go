package record

import "sync"

// queue holds encoded messages between the pump (which reads the world
// model) and the writer (which may wait on a slow disk). It is bounded in
// messages and bytes; push never blocks, it refuses.
type queue struct {
	mu       sync.Mutex
	items    []entry
	head     int
	bytes    int64
	maxN     int
	maxBytes int64
	ready    chan struct{} // one token: something was pushed
}

// entry is a message of one recording session.
type entry struct {
	sess *session
	msg  Message
}

func newQueue(n int, bytes int64) *queue {
	return &queue{maxN: n, maxBytes: bytes, ready: make(chan struct{}, 1)}
}

func (q *queue) push(e entry) bool {
	size := int64(len(e.msg.Data))
	q.mu.Lock()
	n := len(q.items) - q.head
	if n >= q.maxN || (n > 0 && q.bytes+size > q.maxBytes) {
		q.mu.Unlock()
		return false
	}
	if q.head > 0 && len(q.items) == cap(q.items) { // reuse the consumed front
		copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, e)
	q.bytes += size
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
	return true
}

func (q *queue) pop() (entry, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
		if cap(q.items) > 256 { // a burst is over: do not keep its slice
			q.items = nil
		}
		return entry{}, false
	}
	e := q.items[q.head]
	q.items[q.head] = entry{} // release the message's bytes
	q.head++
	q.bytes -= int64(len(e.msg.Data))
	return e, true
}

func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}
