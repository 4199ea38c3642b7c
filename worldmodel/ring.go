package worldmodel

import (
	"slices"
	"sort"
	"sync"
	"time"
)

// ring is a bounded FIFO that overwrites its oldest item when full. The
// backing array grows on demand up to limit, so a source that has produced
// three readings holds three slots, not limit: many configured sources cost
// little until they are busy. A caller may also refuse growth (see
// Config.Horizon): the ring then overwrites its oldest item at its current
// length, and grows again when next allowed.
type ring[T any] struct {
	buf   []T
	start int // index of the oldest item; 0 until the ring first wraps
	limit int
}

// slot returns where the next item goes: a new slot while the ring holds
// fewer than limit items and mayGrow, else the oldest item's. The caller
// writes through the pointer, which saves copying a large item once more
// on the hot path.
func (r *ring[T]) slot(mayGrow bool) *T {
	if len(r.buf) < r.limit && (mayGrow || len(r.buf) == 0) {
		if r.start != 0 {
			// Wrapped at a length below limit: put the oldest first so
			// the new slot can go at the end.
			slices.Reverse(r.buf[:r.start])
			slices.Reverse(r.buf[r.start:])
			slices.Reverse(r.buf)
			r.start = 0
		}
		if len(r.buf) == cap(r.buf) {
			r.grow()
		}
		r.buf = r.buf[:len(r.buf)+1]
		return &r.buf[len(r.buf)-1]
	}
	p := &r.buf[r.start]
	r.start++
	if r.start == len(r.buf) {
		r.start = 0
	}
	return p
}

// grow doubles the backing array (capped at limit) by hand, because append's
// own growth could overshoot limit and hold memory that is never used.
func (r *ring[T]) grow() {
	n := min(max(2*cap(r.buf), 4), r.limit)
	nb := make([]T, len(r.buf), n)
	copy(nb, r.buf)
	r.buf = nb
}

func (r *ring[T]) len() int { return len(r.buf) }

// at returns the i-th oldest item (0 = oldest).
func (r *ring[T]) at(i int) *T {
	i += r.start
	if i >= len(r.buf) {
		i -= len(r.buf)
	}
	return &r.buf[i]
}

// Ring is one source's bounded history. A producer that appends at a high
// rate keeps the handle from Model.Ring and appends through it, which skips
// the source lookup. Handles stay valid for the life of the model.
type Ring struct {
	m      *Model
	source string
	mu     sync.Mutex
	obs    ring[slot]
	total  uint64    // appended over the ring's life, for Stats
	clock  time.Time // base of the stamps given to zero-time appends; see now
}

// rebase bounds how long a ring stamps times from one reading of Now.
// A Pi without RTC boots with a wrong wall clock that NTP steps later;
// rebasing every second picks the step up quickly.
const rebase = time.Second

// now is the clock's Now at about half the cost on the wall clock: Now
// reads two clocks (wall and monotonic, 44 ns together on the benchmark
// machine), while the clock base plus the monotonic time elapsed since it
// (Since) needs one read, and the stamp is the single largest cost of an
// append. On a fake clock it is exactly Now. Called with r.mu held.
func (r *Ring) now() time.Time {
	c := r.m.cfg.Clock
	if d := c.Since(r.clock); d >= 0 && d < rebase {
		return r.clock.Add(d)
	}
	r.clock = c.Now()
	return r.clock
}

// Append stores o in the ring with the same semantics as Model.Append.
// o.Source is set to the ring's source, so a producer may leave it empty.
// A ring handed out for a source beyond Config.MaxSources drops everything
// (and counts it) instead of being nil, so producers need no nil checks.
func (r *Ring) Append(o Observation) uint64 {
	if r.obs.limit == 0 {
		r.m.dropped.Add(1)
		return 0
	}
	o.Source = r.source // share one string instead of retaining the caller's
	r.mu.Lock()
	if o.Time.IsZero() {
		o.Time = r.now()
	}
	// The sequence number is taken under the ring lock so that each ring is
	// sorted by Seq, and so that a reader that loads the global counter and
	// then locks a ring sees every observation numbered up to that value
	// (see Model.visible).
	o.Seq = r.m.seq.Add(1)
	p := r.obs.slot(r.young(o.Time))
	if o.Text == "" && o.Blob == nil && o.Event == nil {
		// A reading, the hot path: what set stores for one, without
		// the call (set is too large to inline).
		p.seq, p.time, p.value, p.str, p.ref, p.kind, p.tag = o.Seq, o.Time, o.Value, o.Unit, nil, o.Kind, 0
	} else {
		p.set(&o)
	}
	r.total++
	r.mu.Unlock()
	r.m.wake.signal()
	return o.Seq
}

// young reports whether the ring may grow for an observation at t: it is
// empty, or its oldest reading is no older than the model's horizon. A
// source that reports once a minute thus keeps 11 readings, not 256 (four
// hours, filling slowly: the memory creep of issue 11). Called with r.mu
// held.
func (r *Ring) young(t time.Time) bool {
	return r.obs.len() == 0 || r.m.young(r.obs.at(0).time, t)
}

// logFloor is how many events, and journal records, are kept whatever
// their age (the dashboard opens on the last 100 of each); beyond it they
// grow towards their capacity only while young, as rings do.
const logFloor = 128

// young reports whether an item at t may grow its ring or log past one
// whose oldest item is at oldest: there is no horizon, or oldest is
// within it.
func (m *Model) young(oldest, t time.Time) bool {
	h := m.cfg.Horizon
	return h <= 0 || t.Sub(oldest) <= h
}

func (r *Ring) latest() (Observation, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.obs.len() == 0 {
		return Observation{}, false
	}
	return r.obs.at(r.obs.len() - 1).observation(r.source), true
}

// since appends to dst the observations with after < Seq <= upTo, oldest
// first, at most limit of them when limit > 0.
func (r *Ring) since(dst []Observation, after, upTo uint64, limit int) []Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.obs.len()
	i := sort.Search(n, func(i int) bool { return r.obs.at(i).seq > after })
	for added := 0; i < n && (limit <= 0 || added < limit); i, added = i+1, added+1 {
		o := r.obs.at(i)
		if o.seq > upTo {
			break
		}
		dst = append(dst, o.observation(r.source))
	}
	return dst
}

// window appends to dst the observations with Time in [from, to] and
// Seq <= upTo, oldest first. Producer-supplied times need not be monotonic,
// so this is a scan, bounded by the ring's capacity.
func (r *Ring) window(dst []Observation, from, to time.Time, upTo uint64) []Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.obs.len() {
		o := r.obs.at(i)
		if o.seq > upTo || (!from.IsZero() && o.time.Before(from)) || (!to.IsZero() && o.time.After(to)) {
			continue
		}
		dst = append(dst, o.observation(r.source))
	}
	return dst
}

// usage reports the observations held, the total appended and approximate
// bytes held: the slots plus the text and blob payloads they reference.
func (r *Ring) usage() (held int, total uint64, bytes int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	bytes = int64(cap(r.obs.buf)) * slotSize
	for i := range r.obs.len() {
		o := r.obs.at(i).observation(r.source)
		bytes += int64(len(o.Text))
		if o.Blob != nil {
			bytes += int64(len(o.Blob.Data))
		}
	}
	return r.obs.len(), r.total, bytes
}
