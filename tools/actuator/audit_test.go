package actuator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/store"

	"github.com/edgeagent/edgeagent/tools"

	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// slowStore is an audit store whose appends take a while, like an fsync
// on an SD card.
type slowStore struct {
	*store.Memory
	delay   time.Duration
	appends atomic.Int64
}

func newSlowStore(d time.Duration) *slowStore { return &slowStore{Memory: store.NewMemory(), delay: d} }

func (s *slowStore) Append(bucket string, v any, keep int) (uint64, error) {
	time.Sleep(s.delay)
	s.appends.Add(1)
	return s.Memory.Append(bucket, v, keep)
}

// A burst of commands much faster than the store can write (more than
// the queue holds) is audited without loss and in order: queued entries
// share records, so the writer keeps up.
func TestAuditBurstIsNotLost(t *testing.T) {
	st := newSlowStore(2 * time.Millisecond)
	cfg := parseBoard(t, "sim", switches)
	set, err := New(Options{Platform: "sim", Actuators: cfg.Actuators, Log: quiet, Adaptor: simadaptor.New(simadaptor.Options{}), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := set.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer set.Stop(ctx)
	var headlight tools.Tool
	for _, tl := range set.Tools() {
		if tl.Spec().Name == "headlight.set" {
			headlight = tl
		}
	}
	const n = auditQueue + 2000
	start := time.Now()
	for i := range n {
		if _, err := headlight.Invoke(ctx, json.RawMessage(fmt.Sprintf(`{"on":%v}`, i%2 == 0))); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	entries, err := set.audit.query(ctx, Query{Limit: n, Tool: "headlight"})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("%d entries, want %d (audit %+v)", len(entries), n, set.Snapshot().Audit)
	}
	for i, e := range entries {
		if want := fmt.Sprintf(`{"on":%v,"duration":0}`, i%2 == 0); string(e.Requested) != want {
			t.Fatalf("entry %d: %s, want %s (order lost)", i, e.Requested, want)
		}
	}
	if a := set.Snapshot().Audit; a.Dropped != 0 || a.Failed != 0 {
		t.Fatalf("audit stats %+v", a)
	}
	records := st.appends.Load()
	t.Logf("%d commands in %s; %d entries in %d records of a 2 ms store", n, took, n, records)
	// One record per entry would take n × 2 ms = 12 s.
	if records > int64(n/batchMax*2) {
		t.Fatalf("%d records for %d entries: the writer did not batch", records, n)
	}
}

// startAudit runs an audit log on st with a fake clock.
func startAudit(t *testing.T, st AuditStore, keep Retention) (*auditLog, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(epoch)
	l := newAuditLog(st, keep, clk.Now, quiet)
	l.start()
	t.Cleanup(func() { _ = l.stop(context.Background()) })
	return l, clk
}

func syncAudit(t *testing.T, l *auditLog) {
	t.Helper()
	if err := l.sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestAuditFloodKeepsSafetyEntries: a flood of routine actions far beyond
// the size bound evicts routine entries only; the e-stop, the reset, the
// refusal and the admin action before it stay, and the eviction is
// counted and recorded in the log itself.
func TestAuditFloodKeepsSafetyEntries(t *testing.T) {
	st := store.NewMemory()
	l, clk := startAudit(t, st, Retention{MaxAge: 24 * time.Hour, MaxBytes: 32 << 10})
	safety := []Entry{
		{Caller: "estop:mqtt", Tool: "estop", Actuator: "*", Result: "ok"},
		{Caller: "mqtt", Tool: "estop.reset", Actuator: "*", Result: "ok"},
		{Caller: "llm", Tool: "pan.set_angle", Actuator: "pan", Result: "refused", Error: "outside the safety envelope"},
		{Caller: "mqtt", Tool: "tools.disable", Actuator: "-", Result: "ok", Admin: true},
	}
	for _, e := range safety {
		e.Time = clk.Now()
		l.record(e)
	}
	for i := range 5000 {
		clk.Advance(time.Millisecond)
		l.record(Entry{Time: clk.Now(), Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight",
			Requested: json.RawMessage(fmt.Sprintf(`{"on":%v}`, i%2 == 0)), Result: "ok"})
	}
	syncAudit(t, l)
	got, err := l.query(context.Background(), Query{Limit: 10, SafetyOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(safety)+1 || got[len(got)-1].Tool != "audit.evicted" {
		t.Fatalf("safety entries after the flood: %+v", got)
	}
	for i, e := range safety {
		if got[i].Tool != e.Tool || got[i].Caller != e.Caller {
			t.Fatalf("safety entry %d: %+v, want %+v", i, got[i], e)
		}
	}
	s := l.stats()
	if s.Evicted < 4000 || s.EvictedSafety != 0 || s.Bytes > 32<<10 || s.Dropped != 0 {
		t.Fatalf("stats %+v", s)
	}
	routine, _ := l.query(context.Background(), Query{Limit: 10000, Tool: "headlight"})
	if len(routine) == 0 || string(routine[len(routine)-1].Requested) != `{"on":false}` {
		t.Fatal("the newest routine entries should be kept")
	}
}

// TestAuditSafetyEvictedOnlyWithoutRoutine: when safety entries alone pass
// the bound, the oldest of them go too, counted apart.
func TestAuditSafetyEvictedOnlyWithoutRoutine(t *testing.T) {
	l, clk := startAudit(t, store.NewMemory(), Retention{MaxAge: 24 * time.Hour, MaxBytes: 16 << 10})
	for range 2000 {
		clk.Advance(time.Millisecond)
		l.record(Entry{Time: clk.Now(), Caller: "llm", Tool: "pan.set_angle", Actuator: "pan", Result: "refused"})
	}
	syncAudit(t, l)
	if s := l.stats(); s.EvictedSafety == 0 || s.Evicted != 0 || s.Bytes > 16<<10 {
		t.Fatalf("stats %+v", s)
	}
}

// TestAuditAgeRetention: entries older than max_age go, safety ones too:
// age is the retention policy, size the flood guard.
func TestAuditAgeRetention(t *testing.T) {
	l, clk := startAudit(t, store.NewMemory(), Retention{MaxAge: 30 * 24 * time.Hour, MaxBytes: 50 << 20})
	l.record(Entry{Time: clk.Now(), Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight", Result: "ok"})
	l.record(Entry{Time: clk.Now(), Caller: "estop:mqtt", Tool: "estop", Actuator: "*", Result: "ok"})
	syncAudit(t, l)
	clk.Advance(29 * 24 * time.Hour)
	l.record(Entry{Time: clk.Now(), Caller: "mqtt", Tool: "horn.beep", Actuator: "horn", Result: "ok"})
	syncAudit(t, l)
	if got, _ := l.query(context.Background(), Query{Limit: 10}); len(got) != 3 {
		t.Fatalf("29 days on: %d entries", len(got))
	}
	clk.Advance(2 * 24 * time.Hour)
	l.record(Entry{Time: clk.Now(), Caller: "mqtt", Tool: "horn.beep", Actuator: "horn", Result: "ok"})
	syncAudit(t, l)
	got, _ := l.query(context.Background(), Query{Limit: 10})
	var tools []string
	for _, e := range got {
		tools = append(tools, e.Tool)
	}
	if strings.Join(tools, ",") != "horn.beep,horn.beep,audit.evicted" {
		t.Fatalf("31 days on: %v", tools)
	}
	if s := l.stats(); s.Evicted != 1 || s.EvictedSafety != 1 {
		t.Fatalf("stats %+v", s)
	}
}

// TestAuditSinceUntil: a time window, across both buckets, in time order.
func TestAuditSinceUntil(t *testing.T) {
	st := store.NewMemory()
	l, clk := startAudit(t, st, DefaultRetention)
	for i := range 10 {
		e := Entry{Time: clk.Now(), Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight", Result: "ok"}
		if i%3 == 0 {
			e.Result = "refused"
		}
		l.record(e)
		clk.Advance(time.Minute)
	}
	syncAudit(t, l)
	got, err := ReadAudit(st, Query{Limit: 100, Since: epoch.Add(2 * time.Minute), Until: epoch.Add(7 * time.Minute)}, 1000)
	if err != nil || len(got) != 5 || !got[0].Time.Equal(epoch.Add(2*time.Minute)) || !got[4].Time.Equal(epoch.Add(6*time.Minute)) {
		t.Fatalf("%v %+v", err, got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Time.Before(got[i-1].Time) {
			t.Fatal("not in time order")
		}
	}
}

// TestAuditSizeAcrossRestart: the bytes already in the store count after a
// restart.
func TestAuditSizeAcrossRestart(t *testing.T) {
	st := store.NewMemory()
	l, clk := startAudit(t, st, DefaultRetention)
	for range 100 {
		l.record(Entry{Time: clk.Now(), Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight", Result: "ok"})
	}
	syncAudit(t, l)
	before := l.stats().Bytes
	_ = l.stop(context.Background())
	l2, _ := startAudit(t, st, DefaultRetention)
	syncAudit(t, l2)
	if before == 0 || l2.stats().Bytes != before {
		t.Fatalf("bytes %d before, %d after a restart", before, l2.stats().Bytes)
	}
}

// TestAdminActionsAudited: administration tools are audited (as safety
// entries) when Options.Admin names them.
func TestAdminActionsAudited(t *testing.T) {
	r := newRig(t, switches, withStore())
	r.set.o.Admin = func(tool string) bool { return strings.HasPrefix(tool, "tools.") || tool == "audit.query" }
	r.set.AuditAdmin("mqtt", "tools.disable", json.RawMessage(`{"tool":"horn.beep"}`), nil)
	r.set.AuditAdmin("mqtt", "audit.query", nil, nil)              // a read: not audited
	r.set.AuditAdmin("mqtt", "headlight.set", nil, nil)            // not admin
	r.set.AuditAdmin("cli", "tools.enable", nil, tools.ErrRefused) // refused
	got, err := r.set.audit.query(context.Background(), Query{Limit: 10, SafetyOnly: true})
	if err != nil || len(got) != 2 || !got[0].Admin || got[0].Tool != "tools.disable" || got[1].Result != "refused" {
		t.Fatalf("%v %+v", err, got)
	}
}

// Without a store the last memKeep entries are kept, oldest first.
func TestAuditInMemory(t *testing.T) {
	r := newRig(t, switches)
	for i := range memKeep + 10 {
		r.must("mqtt", "horn.beep", fmt.Sprintf(`{"count":%d}`, i%20+1))
	}
	entries := r.auditEntries(memKeep+100, "horn")
	if len(entries) != memKeep {
		t.Fatalf("%d entries, want %d", len(entries), memKeep)
	}
	if string(entries[0].Requested) != `{"count":11,"duration":0.2,"gap":0.2}` {
		t.Fatalf("oldest kept entry %s, want the 11th command", entries[0].Requested)
	}
}

// An e-stop before Start (or after Stop: the audit writer is not running)
// does not wait for the store: its entry is written in the background.
func TestEStopBeforeStartDoesNotWaitForTheStore(t *testing.T) {
	st := newSlowStore(300 * time.Millisecond)
	cfg := parseBoard(t, "sim", motor)
	set, err := New(Options{Platform: "sim", Actuators: cfg.Actuators, Log: quiet, Adaptor: simadaptor.New(simadaptor.Options{}), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	set.EStop(worldmodel.Event{Kind: EStopKind, Source: "test"})
	if took := time.Since(start); took >= st.delay {
		t.Fatalf("EStop took %s: it waited for the store", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := set.Stop(ctx); err != nil { // waits for the background write
		t.Fatal(err)
	}
	entries, err := ReadAudit(st, Query{Limit: 10, Tool: "estop"}, 10)
	if err != nil || len(entries) != 1 || entries[0].Caller != "estop:test" {
		t.Fatalf("audit %+v %v", entries, err)
	}
}
