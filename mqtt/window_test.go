package mqtt

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/store"
)

// testWindow is a window of n ids whose span the tests never reach.
func testWindow(n int) Window { return Window{Count: n, Span: time.Hour, Clock: clock.Real()} }

func storedIDs(t *testing.T, kv KV) []string {
	t.Helper()
	var ids []string
	err := kv.ForEach(journalBucket, func(_ string, v json.RawMessage) error {
		var r journalRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		ids = append(ids, r.ID)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// An id stays for the window's span on the clock, then goes: from memory
// at once, from the store with the next command; a restart drops it too.
func TestJournalWindowSpan(t *testing.T) {
	kv := store.NewMemory()
	clk := clock.NewFake(time.Date(2026, 11, 28, 4, 0, 0, 0, time.UTC))
	w := Window{Count: 100, Span: 10 * time.Minute, Clock: clk}
	j := newJournal(kv, w, quiet)
	h := payloadHash([]byte("a"))
	j.begin("a", h)
	j.finish("a", h, []byte(`{"id":"a"}`), true, nil)
	j.flush()
	clk.Advance(9 * time.Minute)
	if v, _ := j.lookup("a", h); v != replay {
		t.Fatalf("a after 9 min: %v", v)
	}
	if v, _ := newJournal(kv, w, quiet).lookup("a", h); v != replay {
		t.Fatalf("a after 9 min and a restart: %v", v)
	}
	clk.Advance(time.Minute)
	if v, _ := j.lookup("a", h); v != fresh {
		t.Fatalf("a after 10 min: %v", v)
	}
	if v, _ := newJournal(kv, w, quiet).lookup("a", h); v != fresh {
		t.Fatalf("a after 10 min and a restart: %v", v)
	}
	j.begin("b", h)
	j.flush()
	if ids := storedIDs(t, kv); len(ids) != 1 || ids[0] != "b" {
		t.Fatalf("stored %v", ids)
	}
}

// Commands that did not run (refused by their tool as invalid or busy, or
// left in the queue at stop) never push out one that ran, however many
// come: they are forgotten, and their places in the ring are reused.
func TestJournalRefusalsDoNotEvict(t *testing.T) {
	kv := store.NewMemory()
	j := newJournal(kv, testWindow(100), quiet)
	h := payloadHash([]byte("ran"))
	j.begin("ran", h)
	j.finish("ran", h, []byte(`{"id":"ran","ok":true}`), true, nil)
	for i := range 10000 {
		id := fmt.Sprint("refused-", i)
		j.begin(id, 1)
		if i%2 == 0 {
			j.finish(id, 1, []byte(`{"code":"invalid"}`), false, nil)
		} else {
			j.forget(id, 1)
		}
		if i%1000 == 0 {
			j.flush()
		}
	}
	j.flush()
	if v, reply := j.lookup("ran", h); v != replay || string(reply) != `{"id":"ran","ok":true}` {
		t.Fatalf("ran: %v %s", v, reply)
	}
	if v, _ := j.lookup("refused-2", 1); v != fresh {
		t.Fatalf("a refused id is remembered: %v", v)
	}
	if ids := storedIDs(t, kv); len(ids) != 1 || ids[0] != "ran" {
		t.Fatalf("stored %d records: %v", len(ids), ids[:min(len(ids), 5)])
	}
	if j.size() != 1 || j.n > len(j.ring) {
		t.Fatalf("%d ids, %d slots of %d", j.size(), j.n, len(j.ring))
	}
}

// TestResendAfterFloodRunsNothingTwice: a 10k/s flood at a robot that
// takes a few at a time is mostly refused busy (more refusals than the
// window holds ids, fewer commands run); then the requester sends
// every command again with the same id. Before, the busy refusals used
// up the duplicate window and the resends ran again; now every command
// that ran is answered with its first reply and runs once.
func TestResendAfterFloodRunsNothingTwice(t *testing.T) {
	r := newRig(t, rigOpts{options: func(o *Options) { o.MaxInflight, o.Queue, o.DedupWindow = 2, 8, 5000 }})
	r.start(t)
	tp := r.topics()
	tl := newTally()
	c := floodClient(t, r.url(), tl, tp)
	ids := flood(t, c, tp, "rf", *chaosRate, *chaosFor)
	tl.settle(len(ids))
	ran := map[string]bool{}
	for _, id := range ids {
		if r.counter.count(id) == 1 {
			ran[id] = true
		}
	}
	busy := r.plane.in.busy.Load()
	t.Logf("flood of %d: %d ran, %d busy", len(ids), len(ran), busy)
	if len(ran) == 0 || len(ran) >= 5000 || busy+uint64(len(ran)) <= 5000 {
		t.Fatalf("the flood did not overflow the queue: %d ran, %d busy", len(ran), busy)
	}
	// Resend only what ran (a resend of the refused ones would run them).
	tl2 := newTally()
	c2 := floodClient(t, r.url(), tl2, tp)
	var resent []string
	for _, id := range ids {
		if ran[id] {
			resent = append(resent, id)
			c2.Publish(tp.Cmd, 1, false, cmdPayload(id))
		}
	}
	tl2.settle(len(resent))
	twice := 0
	for _, id := range resent {
		if r.counter.count(id) != 1 {
			twice++
		}
		reps := tl2.replies[id]
		if len(reps) != 1 || !reps[0].OK || fmt.Sprint(reps[0].Result) != "map[value:1]" {
			t.Fatalf("%s resent: %+v (want its first reply, result 1)", id, reps)
		}
	}
	if twice > 0 {
		t.Fatalf("%d of %d resent commands ran twice", twice, len(resent))
	}
}
