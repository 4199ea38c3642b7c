package actuator

import (
	"cmp"
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

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/tools"
)

// The audit log lives in two store buckets, so that a flood of routine
// actions can never push out the record of what matters after an
// incident: size retention evicts routine entries first, and safety
// entries only when nothing routine is left.
const (
	AuditBucket  = "audit"        // routine actions
	SafetyBucket = "audit.safety" // e-stops, resets, refusals, admin actions
)

// Retention bounds the audit log in the store. The defaults suit a Pi's
// SD card: a month of history, 50 MB at most.
type Retention struct {
	MaxAge   time.Duration
	MaxBytes int64
}

// DefaultRetention is 30 days / 50 MB.
var DefaultRetention = Retention{MaxAge: 30 * 24 * time.Hour, MaxBytes: 50 << 20}

// Entry is one physical action (or an attempt the actuator layer refused).
type Entry struct {
	Seq       uint64          `json:"seq,omitempty"` // the store record it was read from (a burst shares one)
	Time      time.Time       `json:"time"`
	Caller    string          `json:"caller"`        // mqtt, llm, reflex, cli …; timer/deadman/estop:<source> for the layer's own actions
	Via       *tools.Via      `json:"via,omitempty"` // a fleet's or a group's command (caller mqtt)
	Tool      string          `json:"tool"`
	Actuator  string          `json:"actuator"` // "*" for the e-stop
	Requested json.RawMessage `json:"requested,omitempty"`
	Applied   json.RawMessage `json:"applied,omitempty"`
	Result    string          `json:"result"` // ok | refused | failed
	Notes     []string        `json:"notes,omitempty"`
	Error     string          `json:"error,omitempty"`
	Admin     bool            `json:"admin,omitempty"` // an administration tool (not a physical action)
	// Order is the filing order in this run: entries of the same time in
	// the two buckets are read back in the order they happened.
	Order uint64 `json:"order,omitempty"`
}

// Safety reports whether e is kept before routine entries: an e-stop, a
// reset, the stop at shutdown, a dead-man stop, a refusal, an admin action.
func (e Entry) Safety() bool {
	return e.Actuator == "*" || e.Result == "refused" || e.Admin ||
		strings.HasPrefix(e.Caller, "estop") || e.Caller == "deadman"
}

// AuditStats count what the audit log did.
type AuditStats struct {
	Written uint64 `json:"written"`
	// Dropped entries did not fit in the queue while the store was slow
	// (an SD card in trouble); each is also logged.
	Dropped uint64 `json:"dropped"`
	Failed  uint64 `json:"failed"` // store errors
	Queued  int    `json:"queued"`
	// Evicted entries went by retention (age or size), routine and safety
	// apart; Bytes is what the log holds now.
	Evicted       uint64 `json:"evicted"`
	EvictedSafety uint64 `json:"evicted_safety"`
	Bytes         int64  `json:"bytes"`
}

// auditQueue bounds the entries waiting for the store. Writing happens in
// one goroutine so that an actuation never waits for an fsync. The queue
// holds pointers: a channel's buffer is allocated whole, and 4096 entries
// by value would keep 1 MB for the life of the process.
const auditQueue = 4096

type auditItem struct {
	e       Entry
	barrier chan struct{} // when set, closed once everything before it is written
}

type auditLog struct {
	store AuditStore
	keep  Retention
	log   *slog.Logger
	clock clock.Clock

	mu      sync.Mutex
	ch      chan *auditItem
	quit    chan struct{}
	done    chan struct{}
	running bool
	order   uint64 // of the last entry filed

	// What the store holds, per bucket; only the writer goroutine writes
	// them (bytes is read by stats).
	bytes        [2]atomic.Int64 // routine, safety
	lastAgeCheck time.Time
	reportedAt   time.Time
	pending      evictions // evicted, not yet reported in the log itself

	written, dropped, failed, evicted, evictedSafety atomic.Uint64
}

// evictions is what one or more retention passes removed.
type evictions struct {
	routine, safety int
	oldest, newest  time.Time
}

func newAuditLog(st AuditStore, keep Retention, c clock.Clock, log *slog.Logger) *auditLog {
	return &auditLog{store: st, keep: keep, clock: c, log: log}
}

func (l *auditLog) start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.running {
		return
	}
	l.ch = make(chan *auditItem, auditQueue)
	l.quit = make(chan struct{})
	l.done = make(chan struct{})
	l.running = true
	go l.writer(l.ch, l.quit, l.done)
}

// writer appends entries to the store in queue order. One append is one
// fsync (about 1.7 ms on the development machine's disk, more on an SD
// card), so when entries queue up faster than that, up to batchMax of them
// share one record: a flood costs little. Records of one entry are written
// as the entry itself. After each write the retention is applied.
func (l *auditLog) writer(ch <-chan *auditItem, quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	l.loadSizes()
	var batch [2][]Entry // routine, safety
	flush := func() {
		for class := range batch {
			switch len(batch[class]) {
			case 0:
				continue
			case 1:
				l.append(class, batch[class][0], batch[class])
			default:
				l.append(class, auditBatch{Batch: batch[class]}, batch[class])
			}
			batch[class] = batch[class][:0]
		}
		l.retain()
	}
	take := func(it *auditItem) {
		if it.barrier != nil {
			flush()
			close(it.barrier)
			return
		}
		class := 0
		if it.e.Safety() {
			class = 1
		}
		batch[class] = append(batch[class], it.e)
		if len(batch[class]) == batchMax {
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

var buckets = [2]string{AuditBucket, SafetyBucket}

// append writes one record to the bucket of its class.
func (l *auditLog) append(class int, rec any, entries []Entry) {
	data, err := json.Marshal(rec)
	if err == nil {
		_, err = l.store.Append(buckets[class], json.RawMessage(data), 0)
	}
	if err != nil {
		l.failed.Add(uint64(len(entries)))
		l.log.Error("audit entries not written", "entries", len(entries), "first_tool", entries[0].Tool, "err", err)
		return
	}
	l.bytes[class].Add(int64(len(data)))
	l.written.Add(uint64(len(entries)))
}

// loadSizes learns what the store holds from before a restart.
func (l *auditLog) loadSizes() {
	for class, b := range buckets {
		_, n, err := l.store.LogSize(b)
		if err != nil {
			l.log.Warn("audit log: cannot size the existing records", "bucket", b, "err", err)
		}
		l.bytes[class].Store(n)
	}
	l.retain()
}

// retain applies the retention: records older than MaxAge go (checked at
// most once a minute), and past MaxBytes the oldest routine records go
// until the log is a tenth under the bound (so a flood does not evict on
// every write), safety records only when no routine record is left.
// Whatever went is counted, logged and, once a minute at most, recorded
// in the log itself.
func (l *auditLog) retain() {
	now := l.clock.Now()
	var ev evictions
	if l.keep.MaxAge > 0 && now.Sub(l.lastAgeCheck) >= time.Minute {
		l.lastAgeCheck = now
		cutoff := now.Add(-l.keep.MaxAge)
		for class := range buckets {
			l.evict(class, &ev, func(t time.Time, _ int64) bool { return t.Before(cutoff) })
		}
	}
	if over := l.bytes[0].Load() + l.bytes[1].Load() - l.keep.MaxBytes; l.keep.MaxBytes > 0 && over > 0 {
		target := over + l.keep.MaxBytes/10
		for class := range buckets {
			if target <= 0 {
				break
			}
			freedBefore := l.bytes[class].Load()
			l.evict(class, &ev, func(_ time.Time, freed int64) bool { return freed < target })
			target -= freedBefore - l.bytes[class].Load()
		}
	}
	if ev.routine+ev.safety == 0 {
		return
	}
	l.evicted.Add(uint64(ev.routine))
	l.evictedSafety.Add(uint64(ev.safety))
	r := &l.pending
	r.routine += ev.routine
	r.safety += ev.safety
	if r.oldest.IsZero() || ev.oldest.Before(r.oldest) {
		r.oldest = ev.oldest
	}
	if ev.newest.After(r.newest) {
		r.newest = ev.newest
	}
	if now.Sub(l.reportedAt) < time.Minute {
		return // counted now, reported with the next eviction a minute on
	}
	l.log.Warn("audit log: oldest entries evicted by retention", "routine", r.routine, "safety", r.safety,
		"from", r.oldest, "to", r.newest, "max_age", l.keep.MaxAge, "max_bytes", l.keep.MaxBytes)
	e := Entry{Caller: "audit", Tool: "audit.evicted", Actuator: "-", Result: "ok", Admin: true,
		Applied: Marshal(map[string]any{"routine": r.routine, "safety": r.safety, "from": r.oldest, "to": r.newest}),
		Notes:   []string{"retention: entries older than max_age, or the oldest beyond max_bytes (routine first)"}}
	e.Time, e.Order = l.stamp()
	l.append(1, e, []Entry{e})
	l.reportedAt = now
	*r = evictions{}
}

// evict removes the oldest records of a class while more says so; more
// sees the newest time in the record and the bytes freed so far.
func (l *auditLog) evict(class int, ev *evictions, more func(newest time.Time, freed int64) bool) {
	var freed int64
	var got evictions
	_, _, err := l.store.Evict(buckets[class], func(_ uint64, v json.RawMessage) bool {
		oldest, newest, n := recordSpan(v)
		if !more(newest, freed) {
			return false
		}
		freed += int64(len(v))
		got.routine += n
		if got.oldest.IsZero() {
			got.oldest = oldest
		}
		got.newest = newest
		return true
	})
	if err != nil {
		l.log.Error("audit log: retention failed", "bucket", buckets[class], "err", err)
		return
	}
	l.bytes[class].Add(-freed)
	if class == 1 {
		ev.safety += got.routine
	} else {
		ev.routine += got.routine
	}
	if got.routine > 0 {
		if ev.oldest.IsZero() || got.oldest.Before(ev.oldest) {
			ev.oldest = got.oldest
		}
		if got.newest.After(ev.newest) {
			ev.newest = got.newest
		}
	}
}

// recordSpan reads the times and the entry count of a store record.
func recordSpan(v json.RawMessage) (oldest, newest time.Time, entries int) {
	var r struct {
		Time  time.Time `json:"time"`
		Batch []struct {
			Time time.Time `json:"time"`
		} `json:"batch"`
	}
	_ = json.Unmarshal(v, &r)
	if len(r.Batch) == 0 {
		return r.Time, r.Time, 1
	}
	return r.Batch[0].Time, r.Batch[len(r.Batch)-1].Time, len(r.Batch)
}

// stop writes what is queued and ends the writer. It waits up to ctx,
// and at least stopFloor: what is queued is the record of the last
// actions, the shutdown's own safe-state entry among them, and a stop
// whose grace an earlier step used up must not drop it. (The command
// journal's last write, which the stop waits for before the actuators,
// took 1.4-4.4 s with -race at load 20: the audit log then had no time
// left, its writer one fsync from done.) Only a store that hangs for
// longer loses them.
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
	// The wall clock's, as the grace is: a replay's clock stands still
	// while the node stops.
	floor := clock.Real().NewTimer(stopFloor)
	defer floor.Stop()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	select {
	case <-done:
		return nil
	case <-floor.C():
		return errors.New("audit log: pending entries not written in time")
	}
}

// stopFloor is the least time stop gives the writer to finish. It counts
// only once the grace is spent: grace, journal and floor together stay
// under systemd's 10 s (deploy/edgeagent.service).
const stopFloor = 2 * time.Second

// record files an entry; it waits for the store only when the queue is
// full, and then at most enqueueWait.
func (l *auditLog) record(e Entry) { l.file(e, true) }

// tryRecord files an entry unless that means waiting for room in the
// queue; it reports whether it did.
func (l *auditLog) tryRecord(e Entry) bool { return l.file(e, false) }

// stamp takes an entry's time and its filing order together, under the
// log's lock, so that entries read back in time order are in the order
// they were stamped. An action stamps its entry under the actuator's lock
// before it writes (Base.Do): whoever sees the write and acts on it gets a
// later stamp, though its entry may reach the queue first.
func (l *auditLog) stamp() (time.Time, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stampLocked()
}

func (l *auditLog) stampLocked() (time.Time, uint64) {
	l.order++
	return l.clock.Now(), l.order
}

// file queues e, stamping it now unless it was stamped already.
func (l *auditLog) file(e Entry, wait bool) bool {
	l.mu.Lock()
	if e.Order == 0 {
		e.Time, e.Order = l.stampLocked()
	}
	switch {
	case !l.running:
		// Not started (an e-stop before the agent runs): write inline
		// (retention waits for the writer). That waits for the store,
		// which tryRecord must not.
		if !wait {
			l.mu.Unlock()
			return false
		}
		defer l.mu.Unlock()
		class := 0
		if e.Safety() {
			class = 1
		}
		l.append(class, e, []Entry{e})
		return true
	}
	ch, done := l.ch, l.done
	l.mu.Unlock()
	it := &auditItem{e: e}
	select {
	case ch <- it:
		return true
	default:
		if !wait {
			return false
		}
	}
	t := l.clock.NewTimer(enqueueWait)
	defer t.Stop()
	select {
	case ch <- it:
	case <-done:
		l.dropped.Add(1)
		l.log.Error("audit log stopped: entry dropped", "tool", e.Tool, "caller", e.Caller, "result", e.Result)
	case <-t.C():
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
	return AuditStats{Written: l.written.Load(), Dropped: l.dropped.Load(), Failed: l.failed.Load(), Queued: q,
		Evicted: l.evicted.Load(), EvictedSafety: l.evictedSafety.Load(), Bytes: l.bytes[0].Load() + l.bytes[1].Load()}
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
	case ch <- &auditItem{barrier: b}:
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

// Query selects audit entries: the last Limit of those that match Tool (a
// tool such as drive.drive, or an actuator's tools: drive) and lie in
// [Since, Until) (zero: unbounded); SafetyOnly keeps e-stops, resets,
// refusals and admin actions.
type Query struct {
	Limit        int
	Tool         string
	Since, Until time.Time
	SafetyOnly   bool
}

func (q Query) filtered() bool {
	return q.Tool != "" || !q.Since.IsZero() || !q.Until.IsZero() || q.SafetyOnly
}

func (q Query) match(e Entry) bool {
	return (q.Tool == "" || e.Tool == q.Tool || e.Actuator == q.Tool || strings.HasPrefix(e.Tool, q.Tool+".")) &&
		(q.Since.IsZero() || !e.Time.Before(q.Since)) && (q.Until.IsZero() || e.Time.Before(q.Until)) &&
		(!q.SafetyOnly || e.Safety())
}

// query returns the matching entries, oldest first.
func (l *auditLog) query(ctx context.Context, q Query) ([]Entry, error) {
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = l.sync(sctx) // best effort: a slow store still answers with what it has
	return ReadAudit(l.store, q, maxScan)
}

// maxScan bounds the records a filtered query reads (a 50 MB log holds
// far fewer records: queued entries share one).
const maxScan = 200000

// ReadAudit reads the entries q selects from a store, routine and safety
// merged in time order, oldest first. Without a filter it reads the last
// q.Limit records of each bucket; with one, up to scan records of each.
// `edgeagent audit` uses it.
func ReadAudit(st AuditStore, q Query, scan int) ([]Entry, error) {
	n := q.Limit // records; each holds at least one entry
	if q.filtered() {
		n = max(scan, q.Limit)
	}
	var all []Entry
	for _, b := range buckets {
		err := st.Tail(b, n, func(seq uint64, v json.RawMessage) error {
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
				if q.match(e) {
					e.Seq = seq
					all = append(all, e)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(all, func(a, b Entry) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Order, b.Order)
	})
	return filterTail(all, q), nil
}

// filterTail keeps the last q.Limit entries that match q.
func filterTail(entries []Entry, q Query) []Entry {
	out := make([]Entry, 0, min(q.Limit, len(entries)))
	for i := len(entries) - 1; i >= 0 && len(out) < q.Limit; i-- {
		if q.match(entries[i]) {
			out = append(out, entries[i])
		}
	}
	slices.Reverse(out)
	return out
}

// AuditAdmin records a call of an administration tool (Options.Admin says
// which), whatever plugin it belongs to: the actuators plugin calls it
// from its after_act hook, so administration shares the physical actions'
// audit path. The e-stop tools record themselves; audit.query only reads.
func (s *Set) AuditAdmin(caller, tool string, params json.RawMessage, err error) {
	if s.o.Admin == nil || !s.o.Admin(tool) || strings.HasPrefix(tool, "estop.") || tool == "audit.query" {
		return
	}
	result := "ok"
	switch {
	case errors.Is(err, tools.ErrRefused) || tools.CodeOf(err) == tools.CodeRefused:
		result = "refused"
	case err != nil:
		result = "failed"
	}
	s.audit.record(Entry{Caller: caller, Tool: tool, Actuator: "-", Requested: params,
		Result: result, Error: errString(err), Admin: true})
}
