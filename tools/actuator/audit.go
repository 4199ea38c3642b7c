package actuator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// AuditBucket is the store bucket of the audit log.
const AuditBucket = "audit"

// Entry is one physical action (or an attempt the actuator layer refused).
type Entry struct {
	Seq       uint64          `json:"seq,omitempty"` // the store record it was read from (a burst shares one)
	Time      time.Time       `json:"time"`
	Caller    string          `json:"caller"` // mqtt, llm, reflex, cli …; timer/deadman/estop:<source> for the layer's own actions
	Tool      string          `json:"tool"`
	Actuator  string          `json:"actuator"` // "*" for the e-stop
	Requested json.RawMessage `json:"requested,omitempty"`
	Applied   json.RawMessage `json:"applied,omitempty"`
	Result    string          `json:"result"` // ok | refused | failed
	Notes     []string        `json:"notes,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// AuditStats count what the audit log did.
type AuditStats struct {
	Written uint64 `json:"written"`
	// Dropped entries did not fit in the queue while the store was slow
	// (an SD card in trouble); each is also logged.
	Dropped uint64 `json:"dropped"`
	Failed  uint64 `json:"failed"` // store errors
	Queued  int    `json:"queued"`
}

// auditQueue bounds the entries waiting for the store. Writing happens in
// one goroutine so that an actuation never waits for an fsync.
const auditQueue = 4096

// memKeep bounds the in-memory log used when there is no store.
const memKeep = 1000

type auditItem struct {
	e       Entry
	barrier chan struct{} // when set, closed once everything before it is written
}

type auditLog struct {
	store AuditStore
	keep  int
	log   *slog.Logger

	mu      sync.Mutex
	ch      chan auditItem
	quit    chan struct{}
	done    chan struct{}
	running bool
	mem     []Entry // ring of the last memKeep entries when there is no store
	memNext int

	// sizes are the entry counts of the records in the store, oldest
	// first; only the writer goroutine uses them.
	sizes      []int
	sizesTotal int

	written, dropped, failed atomic.Uint64
}

func newAuditLog(st AuditStore, keep int, log *slog.Logger) *auditLog {
	return &auditLog{store: st, keep: keep, log: log}
}

func (l *auditLog) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running || l.store == nil {
		return
	}
	l.ch = make(chan auditItem, auditQueue)
	l.quit = make(chan struct{})
	l.done = make(chan struct{})
	l.running = true
	go l.writer(l.ch, l.quit, l.done)
}

// writer appends entries to the store in queue order. One append is one
// fsync (about 1.7 ms on the development machine's disk, more on an SD
// card), so when entries queue up faster than that, up to batchMax of them
// share one record. Records of one entry are written as the entry itself.
func (l *auditLog) writer(ch <-chan auditItem, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	l.loadSizes()
	batch := make([]Entry, 0, batchMax)
	flush := func() {
		switch len(batch) {
		case 0:
		case 1:
			l.append(batch[0], batch[:1])
		default:
			l.append(auditBatch{Batch: batch}, batch)
		}
		batch = batch[:0]
	}
	take := func(it auditItem) {
		if it.barrier != nil {
			flush()
			close(it.barrier)
			return
		}
		batch = append(batch, it.e)
		if len(batch) == batchMax {
			flush()
		}
	}
	// drain takes what is queued now, without waiting.
	drain := func() {
		for {
			select {
			case it := <-ch:
				take(it)
			default:
				flush()
				return
			}
		}
	}
	for {
		select {
		case it := <-ch:
			take(it)
			drain()
		case <-quit:
			drain()
			return
		}
	}
}

// batchMax bounds the entries in one store record.
const batchMax = 64

// enqueueWait is how long an action's reply waits for room in a full
// queue before its entry is dropped (and counted, and logged): under a
// flood, commands slow down to the store's pace rather than go unaudited,
// but a reply never hangs on a dead disk. The action itself has happened
// by then; the wait is only for the record.
const enqueueWait = 500 * time.Millisecond

// auditBatch is a store record holding several entries.
type auditBatch struct {
	Batch []Entry `json:"batch"`
}

// append writes one record. The store bounds a log by records; the audit
// log is bounded by entries: each append keeps just enough of the newest
// records to hold audit_keep entries.
func (l *auditLog) append(rec any, entries []Entry) {
	l.sizes = append(l.sizes, len(entries))
	l.sizesTotal += len(entries)
	for len(l.sizes) > 1 && l.sizesTotal-l.sizes[0] >= l.keep {
		l.sizesTotal -= l.sizes[0]
		l.sizes = l.sizes[1:]
	}
	if _, err := l.store.Append(AuditBucket, rec, len(l.sizes)); err != nil {
		l.failed.Add(uint64(len(entries)))
		l.log.Error("audit entries not written", "entries", len(entries), "first_tool", entries[0].Tool, "err", err)
		return
	}
	l.written.Add(uint64(len(entries)))
}

// loadSizes learns the sizes of the records already in the store (from
// before a restart).
func (l *auditLog) loadSizes() {
	l.sizes, l.sizesTotal = l.sizes[:0], 0
	err := l.store.Tail(AuditBucket, l.keep, func(_ uint64, v json.RawMessage) error {
		var b struct {
			Batch []json.RawMessage `json:"batch"`
		}
		_ = json.Unmarshal(v, &b)
		n := max(1, len(b.Batch))
		l.sizes = append(l.sizes, n)
		l.sizesTotal += n
		return nil
	})
	if err != nil {
		l.log.Warn("audit log: cannot read the existing records", "err", err)
	}
}

// stop writes what is queued and ends the writer.
func (l *auditLog) stop(ctx context.Context) error {
	l.mu.Lock()
	if !l.running {
		l.mu.Unlock()
		return nil
	}
	l.running = false
	close(l.quit)
	done := l.done
	l.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("audit log: pending entries not written in time")
	}
}

// record files an entry; it waits for the store only when the queue is
// full, and then at most enqueueWait.
func (l *auditLog) record(e Entry) { l.file(e, true) }

// tryRecord files an entry unless that means waiting for room in the
// queue; it reports whether it did.
func (l *auditLog) tryRecord(e Entry) bool { return l.file(e, false) }

func (l *auditLog) file(e Entry, wait bool) bool {
	l.mu.Lock()
	switch {
	case l.store == nil:
		if len(l.mem) < memKeep {
			l.mem = append(l.mem, e)
		} else {
			l.mem[l.memNext] = e
			l.memNext = (l.memNext + 1) % memKeep
		}
		l.written.Add(1)
		l.mu.Unlock()
		return true
	case !l.running:
		// Not started (an e-stop before the agent runs): write inline, with
		// the store's own count (the writer's is not running). That waits
		// for the store, which tryRecord must not.
		if !wait {
			l.mu.Unlock()
			return false
		}
		defer l.mu.Unlock()
		if _, err := l.store.Append(AuditBucket, e, l.keep); err != nil {
			l.failed.Add(1)
			l.log.Error("audit entry not written", "tool", e.Tool, "err", err)
		} else {
			l.written.Add(1)
		}
		return true
	}
	ch, done := l.ch, l.done
	l.mu.Unlock()
	it := auditItem{e: e}
	select {
	case ch <- it:
		return true
	default:
		if !wait {
			return false
		}
	}
	t := time.NewTimer(enqueueWait)
	defer t.Stop()
	select {
	case ch <- it:
	case <-done:
		l.dropped.Add(1)
		l.log.Error("audit log stopped: entry dropped", "tool", e.Tool, "caller", e.Caller, "result", e.Result)
	case <-t.C:
		l.dropped.Add(1)
		l.log.Error("audit queue full: entry dropped", "tool", e.Tool, "caller", e.Caller, "result", e.Result)
	}
	return true
}

func (l *auditLog) stats() AuditStats {
	l.mu.Lock()
	q := 0
	if l.running {
		q = len(l.ch)
	}
	l.mu.Unlock()
	return AuditStats{Written: l.written.Load(), Dropped: l.dropped.Load(), Failed: l.failed.Load(), Queued: q}
}

// sync waits until every entry recorded so far is in the store.
func (l *auditLog) sync(ctx context.Context) error {
	l.mu.Lock()
	if !l.running {
		l.mu.Unlock()
		return nil
	}
	ch, done := l.ch, l.done
	l.mu.Unlock()
	b := make(chan struct{})
	select {
	case ch <- auditItem{barrier: b}:
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
	select {
	case <-b:
		return nil
	case <-done:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// query returns the last limit entries, oldest first; tool filters by tool
// name ("drive.drive") or by actuator ("drive").
func (l *auditLog) query(ctx context.Context, limit int, tool string) ([]Entry, error) {
	if l.store == nil {
		l.mu.Lock()
		mem := append(slices.Clone(l.mem[l.memNext:]), l.mem[:l.memNext]...)
		l.mu.Unlock()
		return filterTail(mem, limit, tool), nil
	}
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = l.sync(sctx) // best effort: a slow store still answers with what it has
	return ReadAudit(l.store, limit, tool, l.keep)
}

// ReadAudit reads the last limit entries of the audit log from a store,
// oldest first, filtered by tool or actuator name when tool is not empty
// (then up to scan entries are examined). `edgeagent audit` uses it.
func ReadAudit(st AuditStore, limit int, tool string, scan int) ([]Entry, error) {
	n := limit // records; each holds at least one entry
	if tool != "" {
		n = max(scan, limit)
	}
	var all []Entry
	err := st.Tail(AuditBucket, n, func(seq uint64, v json.RawMessage) error {
		var r struct {
			Entry
			Batch []Entry `json:"batch"`
		}
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("audit record %d: %w", seq, err)
		}
		if len(r.Batch) == 0 {
			r.Batch = []Entry{r.Entry}
		}
		for _, e := range r.Batch {
			e.Seq = seq
			all = append(all, e)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return filterTail(all, limit, tool), nil
}

func filterTail(entries []Entry, limit int, tool string) []Entry {
	out := make([]Entry, 0, min(limit, len(entries)))
	for i := len(entries) - 1; i >= 0 && len(out) < limit; i-- {
		e := entries[i]
		if tool == "" || e.Tool == tool || e.Actuator == tool || strings.HasPrefix(e.Tool, tool+".") {
			out = append(out, e)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}
