package actuator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
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

// newSlowSet builds the sim set of the actuators block on the slow store.
func newSlowSet(t *testing.T, actuators string, st *slowStore) *actuator.Set {
	t.Helper()
	cfg := parseBoard(t, "sim", actuators)
	set, err := actuator.New(actuator.Options{Platform: "sim", Actuators: cfg.Actuators, Log: quiet, Adaptor: simadaptor.New(simadaptor.Options{}), Store: st})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// A burst of commands much faster than the store can write (more than
// the queue holds) is audited without loss and in order: queued entries
// share records, so the writer keeps up.
func TestAuditBurstIsNotLost(t *testing.T) {
	st := newSlowStore(2 * time.Millisecond)
	set := newSlowSet(t, switches, st)
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
	const n = actuator.AuditQueue + 2000
	start := time.Now()
	for i := range n {
		if _, err := headlight.Invoke(ctx, json.RawMessage(fmt.Sprintf(`{"on":%v}`, i%2 == 0))); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	entries, err := set.AuditQuery(ctx, actuator.Query{Limit: n, Tool: "headlight"})
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
	if records > int64(n/actuator.BatchMax*2) {
		t.Fatalf("%d records for %d entries: the writer did not batch", records, n)
	}
}

// An e-stop before Start (or after Stop: the audit writer is not running)
// does not wait for the store: its entry is written in the background.
func TestEStopBeforeStartDoesNotWaitForTheStore(t *testing.T) {
	st := newSlowStore(300 * time.Millisecond)
	set := newSlowSet(t, motor, st)
	start := time.Now()
	set.EStop(worldmodel.Event{Kind: actuator.EStopKind, Source: "test"})
	if took := time.Since(start); took >= st.delay {
		t.Fatalf("EStop took %s: it waited for the store", took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := set.Stop(ctx); err != nil { // waits for the background write
		t.Fatal(err)
	}
	entries, err := actuator.ReadAudit(st, actuator.Query{Limit: 10, Tool: "estop"}, 10)
	if err != nil || len(entries) != 1 || entries[0].Caller != "estop:test" {
		t.Fatalf("audit %+v %v", entries, err)
	}
}

// A stop whose grace an earlier step used up (the node's stop waits for
// the command journal's last write first) still writes the audit log's
// last entries, the shutdown's safe-state record among them: the stop
// waits for the writer at least stopFloor, not only what is left of ctx.
// The code before returned at once with "pending entries not written in
// time" and the record was lost.
func TestStopAfterTheGraceStillWritesTheLastEntries(t *testing.T) {
	st := newSlowStore(50 * time.Millisecond) // an fsync on a busy SD card
	set := newSlowSet(t, switches, st)
	ctx := context.Background()
	if err := set.Start(ctx); err != nil {
		t.Fatal(err)
	}
	for _, tl := range set.Tools() {
		if tl.Spec().Name == "headlight.set" {
			if _, err := tl.Invoke(ctx, json.RawMessage(`{"on":true}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	spent, cancel := context.WithCancel(ctx)
	cancel()
	if err := set.Stop(spent); err != nil {
		t.Fatalf("stop with the grace spent: %v", err)
	}
	entries, err := actuator.ReadAudit(st, actuator.Query{Limit: 10}, 10)
	if err != nil || len(entries) != 2 || entries[0].Tool != "headlight.set" || entries[1].Caller != "shutdown" {
		t.Fatalf("audit %+v %v", entries, err)
	}
}

// A set needs a store: an audit log that silently kept nothing would be
// worse than none.
func TestNoStoreIsAnError(t *testing.T) {
	cfg := parseBoard(t, "sim", switches)
	if _, err := actuator.New(actuator.Options{Platform: "sim", Actuators: cfg.Actuators, Log: quiet}); err == nil {
		t.Fatal("a set without a store was built")
	}
}

// A physical action a fleet or a group asked for is audited with its mark
// beside the caller (mqtt for both); the robot's own commands have none.
func TestAuditKeepsTheFleetMark(t *testing.T) {
	r := newRig(t, switches, withStore())
	via := &tools.Via{Kind: tools.ViaGroup, Name: "north", Topic: "edgeagent/group/north/cmd"}
	ctx := context.Background()
	if _, err := r.reg.Invoke(ctx, tools.Call{Caller: "mqtt", Via: via, Tool: "headlight.set", Params: json.RawMessage(`{"on":true}`)}); err != nil {
		t.Fatal(err)
	}
	r.must("mqtt", "headlight.set", `{"on":false}`)
	entries := r.auditEntries(2, "headlight.set")
	if len(entries) != 2 {
		t.Fatalf("%d entries", len(entries))
	}
	marks := map[string]*tools.Via{}
	for _, e := range entries {
		marks[string(e.Applied)] = e.Via
	}
	if m := marks[`{"on":true}`]; m == nil || *m != *via {
		t.Errorf("the group's command audited with %+v", m)
	}
	if m := marks[`{"on":false}`]; m != nil {
		t.Errorf("a direct command audited with %+v", m)
	}
}
