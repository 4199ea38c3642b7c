package actuator

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/edgeagent/edgeagent/tools/actuator/simadaptor"
)

// A burst of commands faster than the store can fsync (more than the queue
// holds) is audited without loss, in order: queued entries share records.
func TestAuditBurstIsNotLost(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 6000 audit entries")
	}
	r := newRig(t, switches, withStore())
	const n = auditQueue + 2000
	for i := range n {
		r.must("mqtt", "headlight.set", fmt.Sprintf(`{"on":%v}`, i%2 == 0))
	}
	entries, err := r.set.audit.query(context.Background(), n, "headlight")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("%d entries, want %d (audit %+v)", len(entries), n, r.set.Snapshot().Audit)
	}
	for i, e := range entries {
		if want := fmt.Sprintf(`{"on":%v,"duration":0}`, i%2 == 0); string(e.Requested) != want {
			t.Fatalf("entry %d: %s, want %s (order lost)", i, e.Requested, want)
		}
	}
	if st := r.set.Snapshot().Audit; st.Dropped != 0 || st.Failed != 0 {
		t.Fatalf("audit stats %+v", st)
	}
	var records int
	_ = r.store.Tail(AuditBucket, 10*n, func(uint64, json.RawMessage) error { records++; return nil })
	t.Logf("%d entries in %d records", n, records)
	if records >= n {
		t.Fatalf("%d records for %d entries: nothing was batched", records, n)
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
		if err := r.set.audit.sync(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	var entries int
	_ = r.store.Tail(AuditBucket, 100000, func(_ uint64, v json.RawMessage) error {
		var b auditBatch
		_ = json.Unmarshal(v, &b)
		entries += max(1, len(b.Batch))
		return nil
	})
	if entries < 100 || entries > 100+batchMax {
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
	set2, err := New(Options{Platform: "sim", Actuators: r.set.o.Actuators, Log: quiet, Adaptor: simadaptor.New(simadaptor.Options{}),
		Store: r.store, Settings: Settings{AuditKeep: 100}})
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
	entries, err := set2.audit.query(ctx, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) < 100 || len(entries) > 100+batchMax {
		t.Fatalf("%d entries kept with audit_keep 100 across a restart", len(entries))
	}
	if string(entries[0].Requested) != `{"on":true,"duration":0}` || string(entries[len(entries)-1].Requested) != `{"on":false,"duration":0}` {
		t.Fatal("the oldest kept entries should be from before the restart")
	}
}
