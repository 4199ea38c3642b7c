package actuator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// AuditBucket is the store bucket of the audit log.
const AuditBucket = "audit"

// Entry is one physical action (or an attempt the actuator layer refused).
type Entry struct {
	Seq       uint64          `json:"seq,omitempty"` // set when read from the store
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
	done    chan struct{}
	running bool
	mem     []Entry

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
	l.done = make(chan struct{})
	l.running = true
	go l.writer(l.ch, l.done)
}

func (l *auditLog) writer(ch <-chan auditItem, done chan<- struct{}) {
	defer close(done)
	for it := range ch {
		if it.barrier != nil {
			close(it.barrier)
			continue
		}
		l.append(it.e)
	}
}

func (l *auditLog) append(e Entry) {
	if _, err := l.store.Append(AuditBucket, e, l.keep); err != nil {
		l.failed.Add(1)
		l.log.Error("audit entry not written", "tool", e.Tool, "caller", e.Caller, "err", err)
		return
	}
	l.written.Add(1)
}

// stop writes what is queued and ends the writer.
func (l *auditLog) stop(ctx context.Context) error {
	l.mu.Lock()
	if !l.running {
		l.mu.Unlock()
		return nil
	}
	l.running = false
	close(l.ch)
	done := l.done
	l.mu.Unlock()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.New("audit log: pending entries not written in time")
	}
}

// record files an entry without waiting for the store.
func (l *auditLog) record(e Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.store == nil:
		if len(l.mem) >= memKeep {
			l.mem = append(l.mem[:0], l.mem[1:]...)
		}
		l.mem = append(l.mem, e)
		l.written.Add(1)
	case l.running:
		select {
		case l.ch <- auditItem{e: e}:
		default:
			l.dropped.Add(1)
			l.log.Error("audit queue full: entry dropped", "tool", e.Tool, "caller", e.Caller, "result", e.Result)
		}
	default:
		// Not started (an e-stop before the agent runs): write inline.
		l.append(e)
	}
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
	b := make(chan struct{})
	select {
	case l.ch <- auditItem{barrier: b}:
	default:
		l.mu.Unlock()
		return nil // queue full: read what is there
	}
	l.mu.Unlock()
	select {
	case <-b:
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
		defer l.mu.Unlock()
		return filterTail(l.mem, limit, tool), nil
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
	n := limit
	if tool != "" {
		n = max(scan, limit)
	}
	var all []Entry
	err := st.Tail(AuditBucket, n, func(seq uint64, v json.RawMessage) error {
		var e Entry
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("audit entry %d: %w", seq, err)
		}
		e.Seq = seq
		all = append(all, e)
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
