package worldmodel

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"
)

func TestCursorReadsEveryKindInSequenceOrder(t *testing.T) {
	m := New(Config{})
	m.Append(Observation{Source: "a.x", Kind: Reading, Value: 1})
	c := m.NewCursor(false) // from now: a.x=1 is history
	m.Record(Event{Kind: "motion_start", Source: "cam", Priority: High})
	m.Append(Observation{Source: "a.x", Kind: Reading, Value: 2})
	m.Note(Record{Kind: "tool_call", Source: "pan.set_angle", Data: json.RawMessage(`{"ok":true}`)})
	m.Append(Observation{Source: "b.y", Kind: Reading, Value: 3}) // a source born after the cursor
	m.SetActuator("pan", "angle=30")

	got := c.Read(nil, 0)
	want := []string{"event motion_start", "obs a.x", "record tool_call", "obs b.y", "record actuator"}
	if len(got) != len(want) {
		t.Fatalf("read %d items, want %d: %+v", len(got), len(want), got)
	}
	for i, it := range got {
		var s string
		switch it.Kind {
		case ItemObservation:
			s = "obs " + it.Obs.Source
		case ItemEvent:
			s = "event " + it.Event.Kind
		case ItemRecord:
			s = "record " + it.Record.Kind
		}
		if s != want[i] {
			t.Errorf("item %d = %s, want %s", i, s, want[i])
		}
		if i > 0 && it.Seq() <= got[i-1].Seq() {
			t.Errorf("item %d out of order", i)
		}
	}
	if string(got[4].Record.Data) != `{"state":"angle=30"}` {
		t.Errorf("actuator record data %s", got[4].Record.Data)
	}
	if more := c.Read(nil, 0); len(more) != 0 || c.Missed() != 0 {
		t.Fatalf("second read %v, missed %d", more, c.Missed())
	}
	if all := m.NewCursor(true).Read(nil, 0); len(all) != 6 {
		t.Fatalf("from start: %d items, want 6", len(all))
	}
}

func TestCursorPagesWithoutGapsOrRepeats(t *testing.T) {
	m := New(Config{})
	c := m.NewCursor(false)
	for i := range 50 {
		switch i % 3 {
		case 0:
			m.Append(Observation{Source: fmt.Sprintf("s%d.v", i%5), Kind: Reading, Value: float64(i)})
		case 1:
			m.Record(Event{Kind: "tick", Source: "t"})
		case 2:
			m.Note(Record{Kind: "tool_call", Source: "x"})
		}
	}
	var seqs []uint64
	for {
		page := c.Read(nil, 7)
		if len(page) == 0 {
			break
		}
		if len(page) > 7 {
			t.Fatalf("page of %d > limit", len(page))
		}
		for _, it := range page {
			seqs = append(seqs, it.Seq())
		}
	}
	if len(seqs) != 50 {
		t.Fatalf("paged %d items, want 50", len(seqs))
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("seq %d after %d", seqs[i], seqs[i-1])
		}
	}
}

func TestSlowCursorCountsWhatItMissed(t *testing.T) {
	m := New(Config{DefaultCapacity: 4, Events: 4, Records: 4})
	c := m.NewCursor(false)
	for i := range 10 {
		m.Append(Observation{Source: "a.v", Kind: Reading, Value: float64(i)})
		m.Record(Event{Kind: "e"})
		m.Note(Record{Kind: "r"})
	}
	got := c.Read(nil, 0)
	if len(got) != 12 || c.Missed() != 18 {
		t.Fatalf("read %d, missed %d; want 12 and 18", len(got), c.Missed())
	}
	if got[0].Kind != ItemObservation || got[0].Obs.Value != 6 {
		t.Fatalf("oldest kept %+v", got[0])
	}
	// Lost hands each loss out once; Missed keeps the total.
	if n := c.Lost(); n != 18 {
		t.Fatalf("lost %d, want 18", n)
	}
	for range 5 {
		m.Record(Event{Kind: "e"})
	}
	c.Read(nil, 0)
	if n := c.Lost(); n != 1 || c.Missed() != 19 {
		t.Fatalf("lost %d, missed %d; want 1 and 19", n, c.Missed())
	}
	if n := c.Lost(); n != 0 {
		t.Fatalf("lost %d twice", n)
	}
}

func TestWaitAnnouncesTheNextChange(t *testing.T) {
	m := New(Config{})
	c := m.NewCursor(false)
	ch := c.Wait()
	select {
	case <-ch:
		t.Fatal("closed before any change")
	default:
	}
	m.Append(Observation{Source: "a.v", Kind: Reading})
	select {
	case <-ch:
	case <-time.After(time.Second):
		t.Fatal("an append did not wake the waiter")
	}
	ch = c.Wait()
	m.Note(Record{Kind: "llm"})
	<-ch
}

func TestJournalDoesNotChangeVersion(t *testing.T) {
	m := New(Config{})
	m.Append(Observation{Source: "a.v", Kind: Reading})
	v := m.Version()
	m.Note(Record{Kind: "llm", Source: "engine"})
	if m.Version() != v {
		t.Fatal("a journal record changed Version: the motive would see news")
	}
	m.SetActuator("pan", "angle=10")
	if m.Version() == v {
		t.Fatal("an actuator change did not change Version")
	}
	if recs := m.Records(0, 0); len(recs) != 2 || recs[1].Kind != RecordActuator {
		t.Fatalf("records %+v", recs)
	}
}

// Follow hands over what is appended after it starts, in order, and
// returns when its context ends.
func TestFollowUntilCancelled(t *testing.T) {
	m := New(Config{})
	c := m.NewCursor(false)
	ctx, cancel := context.WithCancel(t.Context())
	got := make(chan Item)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Follow(ctx, func(it Item) { got <- it })
	}()
	var last uint64
	for i := range 300 {
		m.Append(Observation{Source: "a.v", Kind: Reading, Value: float64(i)})
		it := <-got
		if it.Kind != ItemObservation || it.Obs.Value != float64(i) || it.Seq() <= last {
			t.Fatalf("item %d: %+v after seq %d", i, it, last)
		}
		last = it.Seq()
	}
	m.Record(Event{Kind: "e"})
	if it := <-got; it.Kind != ItemEvent || it.Event.Kind != "e" {
		t.Fatalf("event %+v", it)
	}
	// A burst longer than a page arrives whole with no further change.
	for i := range 2*followBatch + 10 {
		m.Note(Record{Kind: "r", Source: fmt.Sprint(i)})
	}
	for i := range 2*followBatch + 10 {
		select {
		case it := <-got:
			if it.Kind != ItemRecord || it.Record.Source != fmt.Sprint(i) {
				t.Fatalf("burst item %d: %+v", i, it)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("burst: %d items of %d arrived", i, 2*followBatch+10)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Follow did not return after its context ended")
	}
}

// Concurrent producers, one consumer following the stream: every item is
// read exactly once and in order (the rings are big enough not to lose any).
func TestCursorFollowsConcurrentProducers(t *testing.T) {
	m := New(Config{DefaultCapacity: 10000, Events: 10000, Records: 10000})
	c := m.NewCursor(false)
	const per = 2000
	var wg sync.WaitGroup
	for p := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				switch p {
				case 0:
					m.Append(Observation{Source: fmt.Sprintf("s%d.v", i%3), Kind: Reading})
				case 1:
					m.Record(Event{Kind: "e"})
				default:
					m.Note(Record{Kind: "r"})
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	var n int
	var last uint64
	var buf []Item
	for finished := false; ; {
		select {
		case <-done:
			finished = true
		default:
		}
		buf = c.Read(buf[:0], 100)
		for _, it := range buf {
			if it.Seq() <= last {
				t.Fatalf("seq %d after %d", it.Seq(), last)
			}
			last = it.Seq()
			n++
		}
		if finished && len(buf) == 0 {
			break
		}
	}
	if n != 3*per || c.Missed() != 0 {
		t.Fatalf("read %d of %d, missed %d", n, 3*per, c.Missed())
	}
}
