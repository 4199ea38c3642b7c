package actuator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/tools"

	"github.com/edgeagent/edgeagent/tools/actuator"
	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// slowStore is an audit store whose appends take a while, like an fsync
// on an SD card.
type slowStore struct {
	mu      sync.Mutex
	delay   time.Duration
	records []json.RawMessage
}

func (s *slowStore) Append(_ string, v any, keep int) (uint64, error) {
	time.Sleep(s.delay)
	data, err := json.Marshal(v)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, data)
	if len(s.records) > keep {
		s.records = s.records[len(s.records)-keep:]
	}
	return uint64(len(s.records)), nil
}

func (s *slowStore) Tail(_ string, n int, fn func(uint64, json.RawMessage) error) error {
	s.mu.Lock()
	recs := s.records[max(0, len(s.records)-n):]
	s.mu.Unlock()
	for i, r := range recs {
		if err := fn(uint64(i+1), r); err != nil {
			return err
		}
	}
	return nil
}

// A burst of commands much faster than the store can write (more than
// the queue holds) is audited without loss and in order: queued entries
// share records, so the writer keeps up.
func TestAuditBurstIsNotLost(t *testing.T) {
	st := &slowStore{delay: 2 * time.Millisecond}
	cfg := parseBoard(t, "sim", switches)
	set, err := actuator.New(actuator.Options{Platform: "sim", Actuators: cfg.Actuators, Log: quiet, Adaptor: simadaptor.New(simadaptor.Options{}), Store: st})
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
	const n = actuator.AuditQueue + 2000
	start := time.Now()
	for i := range n {
		if _, err := headlight.Invoke(ctx, json.RawMessage(fmt.Sprintf(`{"on":%v}`, i%2 == 0))); err != nil {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	entries, err := set.AuditQuery(ctx, n, "headlight")
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
	t.Logf("%d commands in %s; %d entries in %d records of a 2 ms store", n, took, n, len(st.records))
	// One record per entry would take n × 2 ms = 12 s.
	if len(st.records) > n/actuator.BatchMax*2 {
		t.Fatalf("%d records for %d entries: the writer did not batch", len(st.records), n)
	}
}

// The log is bounded by entries, batched or not.
func TestAuditKeepBoundsEntries(t *testing.T) {
	r := newRig(t, switches, withStore(), withAuditKeep(100))
	for i := range 1000 {
		r.must("mqtt", "headlight.set", fmt.Sprintf(`{"on":%v}`, i%2 == 0))
	}
	for range 150 { // one at a time: single-entry records
		r.must("mqtt", "headlight.set", `{"on":true}`)
		if err := r.set.AuditSync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var entries int
	_ = r.store.Tail(actuator.AuditBucket, 100000, func(_ uint64, v json.RawMessage) error {
		var b actuator.AuditBatch
		_ = json.Unmarshal(v, &b)
		entries += max(1, len(b.Batch))
		return nil
	})
	if entries < 100 || entries > 100+actuator.BatchMax {
		t.Fatalf("%d entries kept with audit_keep 100", entries)
	}
}

// After a restart the log still holds audit_keep entries, counting the
// records written before it.
func TestAuditKeepAcrossRestart(t *testing.T) {
	r := newRig(t, switches, withStore(), withAuditKeep(100))
	for range 80 {
		r.must("mqtt", "headlight.set", `{"on":true}`)
	}
	ctx := context.Background()
	if err := r.set.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	set2, err := actuator.New(actuator.Options{Platform: "sim", Actuators: r.configs, Log: quiet, Adaptor: simadaptor.New(simadaptor.Options{}),
		Store: r.store, Settings: actuator.Settings{AuditKeep: 100}})
	if err != nil {
		t.Fatal(err)
	}
	if err := set2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer set2.Stop(ctx)
	for _, tl := range set2.Tools() {
		if tl.Spec().Name == "headlight.set" {
			for range 80 {
				if _, err := tl.Invoke(ctx, json.RawMessage(`{"on":false}`)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	entries, err := set2.AuditQuery(ctx, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 100 || len(entries) > 100+actuator.BatchMax {
		t.Fatalf("%d entries kept with audit_keep 100 across a restart", len(entries))
	}
	if string(entries[0].Requested) != `{"on":true,"duration":0}` || string(entries[len(entries)-1].Requested) != `{"on":false,"duration":0}` {
		t.Fatal("the oldest kept entries should be from before the restart")
	}
}

// Without a store the last actuator.MemKeep entries are kept, oldest first.
func TestAuditInMemory(t *testing.T) {
	r := newRig(t, switches)
	for i := range actuator.MemKeep + 10 {
		r.must("mqtt", "horn.beep", fmt.Sprintf(`{"count":%d}`, i%20+1))
	}
	entries := r.auditEntries(actuator.MemKeep+100, "horn")
	if len(entries) != actuator.MemKeep {
		t.Fatalf("%d entries, want %d", len(entries), actuator.MemKeep)
	}
	if string(entries[0].Requested) != `{"count":11,"duration":0.2,"gap":0.2}` {
		t.Fatalf("oldest kept entry %s, want the 11th command", entries[0].Requested)
	}
}

// An e-stop before Start (or after Stop: the audit writer is not running)
// does not wait for the store: its entry is written in the background.
func TestEStopBeforeStartDoesNotWaitForTheStore(t *testing.T) {
	st := &slowStore{delay: 300 * time.Millisecond}
	cfg := parseBoard(t, "sim", motor)
	set, err := actuator.New(actuator.Options{Platform: "sim", Actuators: cfg.Actuators, Log: quiet, Adaptor: simadaptor.New(simadaptor.Options{}), Store: st})
	if err != nil {
		t.Fatal(err)
	}
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
	entries, err := actuator.ReadAudit(st, 10, "estop", 10)
	if err != nil || len(entries) != 1 || entries[0].Caller != "estop:test" {
		t.Fatalf("audit %+v %v", entries, err)
	}
}
