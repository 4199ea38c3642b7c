package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
)

// KV is the part of the store the command journal needs (store.Store is
// one; store.Memory in tests and with --no-store).
type KV interface {
	Update(bucket string, put map[string]any, del []string) error
	Get(bucket, key string, v any) (bool, error)
	ForEach(bucket string, fn func(key string, value json.RawMessage) error) error
}

// journalBucket holds the recently seen command ids.
const journalBucket = "mqtt.commands"

// maxKeptReply bounds a reply kept for replay; a longer one is replayed as
// a short reply that says the command ran and its result was not kept.
const maxKeptReply = 2048

// The journal is what makes a QoS 1 command take effect at most once
// although MQTT delivers it at least once: redelivery after a lost
// acknowledgement, a broker that lost its state and takes the publisher's
// resend as new, a restart of the agent with its persistent session. Every
// command id is written to the store (durably, before the command runs)
// and its reply once it is answered; a command whose id is in the window
// is answered from there instead of running again. A command that was
// started but has no reply (the agent died while running it) is answered
// "interrupted" and not run again: it may or may not have taken effect,
// which only the requester can decide to risk.
//
// Writes are coalesced: whatever waits while one batch is being written
// goes into the next, so a flood costs one fsync per batch, not per command.
//
// The window holds the commands that were let in to run (queued), not
// everything that arrived: a command refused busy is never journalled, and
// one answered invalid or busy by its tool is forgotten once answered, so a
// flood of refusals cannot push out the ids of commands that ran. An id
// stays for the window's span (a time, from the clock) unless the window's
// count is reached first.
//
// Memory grows with the ids the window holds and is bounded by its count:
// a table of 64-bit id keys (idKey) and a ring of (key, sequence) slots,
// at most twice the window's count, doubled when it is full and more than
// half of it is live. A robot that takes few commands does not carry a
// full window from start (1.5 MB for 10,000 ids once it has turned
// over); one that took a flood keeps its high-water mark. It cannot creep for hours: every id leaves
// after the window's span, so the window is at its steady size one span
// after the command rate settles. A forgotten id leaves a hole in the ring
// that no longer counts against the window; when the ring is full and at
// most half live it is compacted in place. Ids and replies stay in the
// store; the rare duplicate reads its record back from there, which also
// confirms that the key was its id and not another's.
type journal struct {
	kv    KV
	limit Window
	log   *slog.Logger
	key   func(id string) uint64 // idKey; tests give colliding ones

	mu      sync.Mutex
	byKey   map[uint64]journalEntry
	ring    []slot // a queue of the entries in sequence order, from head
	head, n int
	next    uint64 // sequence of the next entry
	pending map[string]any
	dels    []string
	waiters []chan struct{}
	after   []func() // run once the batch is durable (acknowledgements)
	wake    chan struct{}

	failed atomic.Uint64 // store errors
}

// Window bounds the ids the journal remembers: at most Count, each for
// at most Span after it was let in, on Clock's time.
type Window struct {
	Count int
	Span  time.Duration
	Clock clock.Clock
}

// slot is an entry's place in the ring; the entry is live while
// byKey[key].seq == seq.
type slot struct{ key, seq uint64 }

type journalEntry struct {
	hash uint64 // of the payload
	seq  uint64
	at   int64 // when it was let in (unix ns): it leaves the window at at+Span
	done bool
	mine bool // started by this process (not loaded from the store)
}

// journalRecord is an entry as stored, under storeKey(Seq): keys in the
// order of the commands, so that the store appends at one end of its
// B-tree and deletes at the other, touching two leaves a batch instead of
// one at random per command (which kept the whole bucket in RSS).
type journalRecord struct {
	ID    string          `json:"i,omitempty"` // empty in stores written before: the key is the id
	Hash  uint64          `json:"h"`
	Seq   uint64          `json:"s"`
	At    int64           `json:"t,omitempty"` // unix ns; 0 in stores written before: taken as the load time
	Done  bool            `json:"d,omitempty"`
	Reply json.RawMessage `json:"r,omitempty"`
}

// verdict is what begin says about a command.
type verdict int

const (
	fresh       verdict = iota // not seen: run it
	replay                     // answered before: send the kept reply
	running                    // running now in this process: its reply is on the way
	interrupted                // started before the agent stopped, no reply
	reused                     // the id was used for a different command
)

func newJournal(kv KV, limit Window, log *slog.Logger) *journal {
	if limit.Clock == nil {
		limit.Clock = clock.Real()
	}
	j := &journal{kv: kv, limit: limit, log: log, key: idKey,
		byKey:   map[uint64]journalEntry{},
		pending: map[string]any{}, wake: make(chan struct{}, 1)}
	j.load()
	return j
}

// idKey is the table key of a command id: the same 64-bit FNV-1a as the
// payload's hash.
func idKey(id string) uint64 { return payloadHash([]byte(id)) }

// storeKey names the record of the entry begun with seq: fixed-width
// hex, so the store's byte order is the sequence order.
func storeKey(seq uint64) string { return fmt.Sprintf("%016x", seq) }

// load reads the window left by the previous run. An entry that was
// started and not done stays so: its command was interrupted. Records of
// earlier layouts (keyed by the id itself, or by its key) are rewritten
// under their sequence; records beyond the window's count or span are
// deleted.
func (j *journal) load() {
	type loaded struct {
		key string
		journalRecord
	}
	var all []loaded
	err := j.kv.ForEach(journalBucket, func(key string, v json.RawMessage) error {
		var r journalRecord
		if json.Unmarshal(v, &r) == nil {
			all = append(all, loaded{key, r})
		}
		return nil
	})
	if err != nil {
		j.log.Warn("command journal unreadable: redelivered commands from before this start may run again", "err", err)
	}
	slices.SortFunc(all, func(a, b loaded) int { return cmpU64(a.Seq, b.Seq) })
	if n := len(all); n > 0 {
		j.next = all[n-1].Seq + 1
	}
	now := j.limit.Clock.Now().UnixNano()
	for i, e := range all {
		if e.At == 0 {
			e.At = now
		}
		if len(all)-i > j.limit.Count || j.expired(e.At, now) {
			j.dels = append(j.dels, e.key)
			continue
		}
		if e.ID == "" {
			e.ID = e.key
		}
		if sk := storeKey(e.Seq); sk != e.key {
			j.dels = append(j.dels, e.key)
			j.pending[sk] = e.journalRecord
		}
		k := j.key(e.ID)
		j.byKey[k] = journalEntry{hash: e.Hash, seq: e.Seq, at: e.At, done: e.Done}
		j.push(slot{key: k, seq: e.Seq})
	}
}

// expired says whether an entry let in at at has left the window's span.
func (j *journal) expired(at, now int64) bool { return now-at >= int64(j.limit.Span) }

// live says whether a slot's entry is still in the window.
func (j *journal) live(s slot) bool {
	e, ok := j.byKey[s.key]
	return ok && e.seq == s.seq
}

// push adds a slot at the tail. A full ring at most half live is
// compacted, else it doubles; at its largest, twice the window's count,
// it holds at most Count live slots, so compaction frees half of it.
func (j *journal) push(s slot) {
	if j.n == len(j.ring) {
		if len(j.byKey) <= len(j.ring)/2 || len(j.ring) >= 2*j.limit.Count {
			j.compact()
		} else {
			j.grow()
		}
	}
	j.ring[(j.head+j.n)%len(j.ring)] = s
	j.n++
}

// minRing is the ring's first size.
const minRing = 64

// grow doubles the ring, up to twice the window's count, keeping the
// order from index 0.
func (j *journal) grow() {
	ring := make([]slot, min(max(2*len(j.ring), minRing), 2*j.limit.Count))
	for i := range j.n {
		ring[i] = j.ring[(j.head+i)%len(j.ring)]
	}
	j.ring, j.head = ring, 0
}

// compact drops the holes from the ring, keeping the order.
func (j *journal) compact() {
	kept := 0
	for i := range j.n {
		s := j.ring[(j.head+i)%len(j.ring)]
		if !j.live(s) {
			j.drop(s.seq)
			continue
		}
		j.ring[(j.head+kept)%len(j.ring)] = s
		kept++
	}
	j.n = kept
}

// drop deletes the record of the entry begun with seq, pending or stored
// (a missing key is no error: it may have been forgotten already).
func (j *journal) drop(seq uint64) {
	sk := storeKey(seq)
	delete(j.pending, sk)
	j.dels = append(j.dels, sk)
}

func cmpU64(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func payloadHash(b []byte) uint64 {
	h := fnv.New64a()
	_, _ = h.Write(b)
	return h.Sum64()
}

// lookup says what to do with a command without recording anything: the
// router answers duplicates at once and queues the rest.
func (j *journal) lookup(id string, hash uint64) (verdict, []byte) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.verdictLocked(id, hash)
}

func (j *journal) verdictLocked(id string, hash uint64) (verdict, []byte) {
	e, ok := j.byKey[j.key(id)]
	if !ok || j.expired(e.at, j.limit.Clock.Now().UnixNano()) {
		return fresh, nil // an expired entry is evicted by the next begin
	}
	rec, found := j.recordLocked(e.seq)
	switch {
	case found && rec.ID != id:
		// Another id with the same key: this one is new. Beginning it
		// takes the key over, and the other id loses its protection.
		return fresh, nil
	case e.hash != hash:
		return reused, nil
	case e.done:
		return replay, rec.Reply
	case e.mine:
		return running, nil
	}
	return interrupted, nil
}

// recordLocked reads the record begun with seq, pending or stored. A
// store that fails reports nothing found: the key is then taken as the id.
func (j *journal) recordLocked(seq uint64) (journalRecord, bool) {
	sk := storeKey(seq)
	if r, ok := j.pending[sk].(journalRecord); ok {
		return r, true
	}
	var r journalRecord
	ok, err := j.kv.Get(journalBucket, sk, &r)
	if err != nil {
		j.failed.Add(1)
		return r, false
	}
	return r, ok
}

// begin records a fresh command as started and returns a channel closed
// once that is durable; the command must not run before. Any other
// verdict (a duplicate queued twice) is returned as by lookup.
func (j *journal) begin(id string, hash uint64) (verdict, []byte, <-chan struct{}) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if v, reply := j.verdictLocked(id, hash); v != fresh {
		return v, reply, nil
	}
	now := j.limit.Clock.Now().UnixNano()
	j.evictLocked(now)
	k, seq := j.key(id), j.next
	j.next++
	j.byKey[k] = journalEntry{hash: hash, seq: seq, at: now, mine: true}
	j.push(slot{key: k, seq: seq})
	j.pending[storeKey(seq)] = journalRecord{ID: id, Hash: hash, Seq: seq, At: now}
	done := make(chan struct{})
	j.waiters = append(j.waiters, done)
	j.signal()
	return fresh, nil, done
}

// finish records the reply of a command started with begin; then, once
// that is durable, runs ack (the MQTT acknowledgement), so that a command
// the broker redelivers finds its reply. hash is the payload's, as given
// to begin. A command that did not run (keep false: its tool answered
// invalid or busy) is forgotten instead, so that refusals never take the
// place of commands that ran.
func (j *journal) finish(id string, hash uint64, reply []byte, keep bool, ack func()) {
	if len(reply) > maxKeptReply {
		reply = nil
	}
	j.mu.Lock()
	k := j.key(id)
	if e, ok := j.byKey[k]; ok && e.mine && e.hash == hash { // not an entry that took its key over
		if keep {
			e.done = true
			j.byKey[k] = e
			j.pending[storeKey(e.seq)] = journalRecord{ID: id, Hash: e.hash, Seq: e.seq, At: e.at, Done: true, Reply: reply}
		} else {
			delete(j.byKey, k)
			j.drop(e.seq)
		}
	}
	if ack != nil {
		j.after = append(j.after, ack)
	}
	j.signal()
	j.mu.Unlock()
}

// forget removes a journalled command that was not run (left in the
// queue at stop): the same id may come again and run. Its slot in the
// ring stays, as a hole, until it is reached or compacted.
func (j *journal) forget(id string, hash uint64) {
	j.mu.Lock()
	defer j.mu.Unlock()
	k := j.key(id)
	e, ok := j.byKey[k]
	if !ok || !e.mine || e.hash != hash { // not an entry that took its key over
		return
	}
	delete(j.byKey, k)
	j.drop(e.seq)
	j.signal()
}

func (j *journal) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// evictLocked makes room for the next id: from the oldest, the entries
// past the window's span go, and the oldest live one if the window's count
// is reached. Holes at the head go with them; the record goes whatever
// became of its entry (forgotten, or its key taken over by a later id).
func (j *journal) evictLocked(now int64) {
	for j.n > 0 {
		s := j.ring[j.head]
		live := j.live(s)
		if live && len(j.byKey) < j.limit.Count && !j.expired(j.byKey[s.key].at, now) {
			return
		}
		if live {
			delete(j.byKey, s.key)
		}
		j.drop(s.seq)
		j.head = (j.head + 1) % len(j.ring)
		j.n--
	}
}

// run writes batches until ctx ends, then writes what is left.
func (j *journal) run(ctx context.Context) {
	for {
		select {
		case <-j.wake:
			j.flush()
		case <-ctx.Done():
			j.flush()
			return
		}
	}
}

// flush writes everything pending in one store update, then releases the
// commands waiting for it and runs the acknowledgements. A store that
// fails is logged and counted; the commands still run (a broken SD card
// must not stop the robot), they are just not protected across a restart.
func (j *journal) flush() {
	j.mu.Lock()
	if len(j.pending) == 0 && len(j.dels) == 0 && len(j.waiters) == 0 && len(j.after) == 0 {
		j.mu.Unlock()
		return
	}
	put, dels, waiters, after := j.pending, j.dels, j.waiters, j.after
	j.pending, j.dels, j.waiters, j.after = map[string]any{}, nil, nil, nil
	j.mu.Unlock()
	if len(put) > 0 || len(dels) > 0 {
		if err := j.kv.Update(journalBucket, put, dels); err != nil {
			if j.failed.Add(1) == 1 || j.failed.Load()%1000 == 0 {
				j.log.Error("command journal not written: a command redelivered after a restart may run again", "err", err)
			}
		}
	}
	for _, w := range waiters {
		close(w)
	}
	for _, ack := range after {
		ack()
	}
}

// size is the number of ids in the window.
func (j *journal) size() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.byKey)
}
