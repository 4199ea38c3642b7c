package actuator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
)

// The audit log's retention, tested on the log itself with a fake clock.

var (
	auditQuiet = slog.New(slog.DiscardHandler)
	auditEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

// startAudit runs an audit log on st with a fake clock.
func startAudit(t *testing.T, st AuditStore, keep Retention) (*auditLog, *clock.Fake) {
	t.Helper()
	clk := clock.NewFake(auditEpoch)
	l := newAuditLog(st, keep, clk, auditQuiet)
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
		l.record(e)
	}
	for i := range 5000 {
		clk.Advance(time.Millisecond)
		l.record(Entry{Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight",
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
		l.record(Entry{Caller: "llm", Tool: "pan.set_angle", Actuator: "pan", Result: "refused"})
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
	l.record(Entry{Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight", Result: "ok"})
	l.record(Entry{Caller: "estop:mqtt", Tool: "estop", Actuator: "*", Result: "ok"})
	syncAudit(t, l)
	clk.Advance(29 * 24 * time.Hour)
	l.record(Entry{Caller: "mqtt", Tool: "horn.beep", Actuator: "horn", Result: "ok"})
	syncAudit(t, l)
	if got, _ := l.query(context.Background(), Query{Limit: 10}); len(got) != 3 {
		t.Fatalf("29 days on: %d entries", len(got))
	}
	clk.Advance(2 * 24 * time.Hour)
	l.record(Entry{Caller: "mqtt", Tool: "horn.beep", Actuator: "horn", Result: "ok"})
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
		e := Entry{Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight", Result: "ok"}
		if i%3 == 0 {
			e.Result = "refused"
		}
		l.record(e)
		clk.Advance(time.Minute)
	}
	syncAudit(t, l)
	got, err := ReadAudit(st, Query{Limit: 100, Since: auditEpoch.Add(2 * time.Minute), Until: auditEpoch.Add(7 * time.Minute)}, 1000)
	if err != nil || len(got) != 5 || !got[0].Time.Equal(auditEpoch.Add(2*time.Minute)) || !got[4].Time.Equal(auditEpoch.Add(6*time.Minute)) {
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
	l, _ := startAudit(t, st, DefaultRetention)
	for range 100 {
		l.record(Entry{Caller: "mqtt", Tool: "headlight.set", Actuator: "headlight", Result: "ok"})
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
	set, err := New(Options{Platform: "sim", Log: auditQuiet, Adaptor: simadaptor.New(simadaptor.Options{}), Store: store.NewMemory(),
		Admin: func(tool string) bool { return strings.HasPrefix(tool, "tools.") || tool == "audit.query" }})
	if err != nil {
		t.Fatal(err)
	}
	set.AuditAdmin("mqtt", "tools.disable", json.RawMessage(`{"tool":"horn.beep"}`), nil)
	set.AuditAdmin("mqtt", "audit.query", nil, nil)              // a read: not audited
	set.AuditAdmin("mqtt", "headlight.set", nil, nil)            // not admin
	set.AuditAdmin("cli", "tools.enable", nil, tools.ErrRefused) // refused
	got, err := set.audit.query(context.Background(), Query{Limit: 10, SafetyOnly: true})
	if err != nil || len(got) != 2 || !got[0].Admin || got[0].Tool != "tools.disable" || got[1].Result != "refused" {
		t.Fatalf("%v %+v", err, got)
	}
}
