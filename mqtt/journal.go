package mqtt

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
)

// KV is the part of the store the command journal needs (store.Store is
// one; store.Memory in tests and with --no-store).
type KV interface {
	Update(bucket string, put map[string]any, del []string) error
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
type journal struct {
	kv     KV
	window int
	log    *slog.Logger

	mu      sync.Mutex
	byID    map[string]*journalEntry
	order   []string // ids oldest first (a ring: head is the oldest)
	head    int
	next    uint64 // sequence of the next entry
	pending map[string]any
	dels    []string
	waiters []chan struct{}
	after   []func() // run once the batch is durable (acknowledgements)
	wake    chan struct{}

	failed atomic.Uint64 // store errors
}

type journalEntry struct {
	hash  uint64
	seq   uint64
	done  bool
	mine  bool   // started by this process (not loaded from the store)
	reply []byte // nil until done; never kept beyond maxKeptReply
}

// journalRecord is an entry as stored.
type journalRecord struct {
	Hash  uint64          `json:"h"`
	Seq   uint64          `json:"s"`
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

func newJournal(kv KV, window int, log *slog.Logger) *journal {
	// byID grows with use: sized for the whole window up front it would
	// hold half a megabyte on a robot that gets a command a minute.
	j := &journal{kv: kv, window: window, log: log, byID: map[string]*journalEntry{},
		pending: map[string]any{}, wake: make(chan struct{}, 1)}
	j.load()
	return j
}

// load reads the window left by the previous run. An entry that was
// started and not done stays so: its command was interrupted.
func (j *journal) load() {
	type loaded struct {
		id string
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
	for _, e := range all {
		j.byID[e.id] = &journalEntry{hash: e.Hash, seq: e.Seq, done: e.Done, reply: e.Reply}
		j.order = append(j.order, e.id)
		j.next = e.Seq + 1
	}
	j.evictLocked()
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
	e, ok := j.byID[id]
	switch {
	case !ok:
		return fresh, nil
	case e.hash != hash:
		return reused, nil
	case e.done:
		return replay, e.reply
	case e.mine:
		return running, nil
	}
	return interrupted, nil
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
	e := &journalEntry{hash: hash, seq: j.next, mine: true}
	j.next++
	j.byID[id] = e
	j.order = append(j.order, id)
	j.pending[id] = journalRecord{Hash: hash, Seq: e.seq}
	j.evictLocked()
	done := make(chan struct{})
	j.waiters = append(j.waiters, done)
	j.signal()
	return fresh, nil, done
}

// finish records the reply of a command started with begin; then, once
// that is durable, runs ack (the MQTT acknowledgement), so that a command
// the broker redelivers finds its reply.
func (j *journal) finish(id string, reply []byte, ack func()) {
	if len(reply) > maxKeptReply {
		reply = nil
	}
	j.mu.Lock()
	if e, ok := j.byID[id]; ok {
		e.done, e.reply = true, reply
		j.pending[id] = journalRecord{Hash: e.hash, Seq: e.seq, Done: true, Reply: reply}
	}
	if ack != nil {
		j.after = append(j.after, ack)
	}
	j.signal()
	j.mu.Unlock()
}

// forget removes a journalled command that was not run (refused as busy,
// left in the queue at stop): the same id may come again and run. Its
// slot in the eviction ring stays until it is reached.
func (j *journal) forget(id string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(j.byID, id)
	delete(j.pending, id)
	j.dels = append(j.dels, id)
	j.signal()
}

func (j *journal) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// evictLocked keeps the window bounded: the oldest ids go first.
func (j *journal) evictLocked() {
	for len(j.order)-j.head > j.window {
		id := j.order[j.head]
		j.order[j.head] = ""
		j.head++
		if _, ok := j.byID[id]; ok {
			delete(j.byID, id)
			delete(j.pending, id)
			j.dels = append(j.dels, id)
		}
	}
	if j.head > 1024 && j.head > len(j.order)/2 { // compact the ring
		j.order = append(j.order[:0:0], j.order[j.head:]...)
		j.head = 0
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
	j.pending, j.dels, j.waiters, j.after = make(map[string]any, len(put)), nil, nil, nil
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
	return len(j.byID)
}
