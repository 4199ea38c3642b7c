package worldmodel

import (
	"runtime"
	"strconv"
	"testing"
	"time"
)

func TestRingKeepsNewestUpToCapacity(t *testing.T) {
	for _, capacity := range []int{1, 2, 3, 7, 256} {
		m := New(Config{DefaultCapacity: capacity})
		r := m.Ring("s")
		for n := 1; n <= 3*capacity+1; n++ {
			seq := r.Append(Observation{Kind: Reading, Value: float64(n)})
			got := m.Since("s", 0, 0)
			if want := min(n, capacity); len(got) != want {
				t.Fatalf("cap %d after %d appends: %d held, want %d", capacity, n, len(got), want)
			}
			if last := got[len(got)-1]; last.Seq != seq || last.Value != float64(n) {
				t.Fatalf("cap %d: newest = %+v, want seq %d value %d", capacity, last, seq, n)
			}
			for i, o := range got {
				if want := float64(n - len(got) + 1 + i); o.Value != want {
					t.Fatalf("cap %d after %d appends: item %d = %v, want %v", capacity, n, i, o.Value, want)
				}
			}
			if c := cap(m.sources.Load().byName["s"].obs.buf); c > capacity {
				t.Fatalf("cap %d: backing array grew to %d", capacity, c)
			}
		}
	}
}

// TestHorizonBoundsSlowSources: a source reporting once a minute for four
// hours keeps about one to two horizons of readings, not its capacity; when
// it speeds up the ring grows again, oldest first and nothing lost.
func TestHorizonBoundsSlowSources(t *testing.T) {
	m := New(Config{DefaultCapacity: 256, Horizon: 10 * time.Minute})
	r := m.Ring("s")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := 0
	add := func(at time.Time) {
		n++
		r.Append(Observation{Time: at, Kind: Reading, Value: float64(n)})
	}
	for i := range 240 {
		add(t0.Add(time.Duration(i) * time.Minute))
	}
	check := func(minHeld, maxHeld int) []Observation {
		t.Helper()
		got := m.Since("s", 0, 0)
		if len(got) < minHeld || len(got) > maxHeld {
			t.Fatalf("after %d readings: %d held, want %d–%d", n, len(got), minHeld, maxHeld)
		}
		for i, o := range got {
			if want := float64(n - len(got) + 1 + i); o.Value != want {
				t.Fatalf("after %d readings: item %d = %v, want %v (oldest first, none skipped)", n, i, o.Value, want)
			}
		}
		return got
	}
	got := check(11, 11)
	if span := got[len(got)-1].Time.Sub(got[0].Time); span < 10*time.Minute {
		t.Fatalf("history reaches back %v, want at least the horizon", span)
	}
	// The same source at 10 Hz: the ring is wrapped below capacity and
	// must grow again, up to its capacity.
	last := t0.Add(240 * time.Minute)
	for i := range 1000 {
		add(last.Add(time.Duration(i+1) * 100 * time.Millisecond))
	}
	check(256, 256)
}

func TestCapacityOverride(t *testing.T) {
	m := New(Config{DefaultCapacity: 10, Capacities: map[string]int{"camera.snapshot": 2}})
	for range 20 {
		m.Append(Observation{Source: "camera.snapshot", Kind: BlobRef, Blob: &Blob{MIME: "image/jpeg", Data: make([]byte, 100)}})
		m.Append(Observation{Source: "env.temperature", Kind: Reading, Value: 1})
	}
	if n := len(m.Since("camera.snapshot", 0, 0)); n != 2 {
		t.Errorf("blob source holds %d, want 2", n)
	}
	if n := len(m.Since("env.temperature", 0, 0)); n != 10 {
		t.Errorf("default source holds %d, want 10", n)
	}
}

// TestMemoryBoundedAfterMillionsOfAppends appends millions of observations,
// including fresh strings and blobs that only the rings keep alive, and
// checks that what is held, and the live heap, stop growing once the rings
// are full.
func TestMemoryBoundedAfterMillionsOfAppends(t *testing.T) {
	n := 3_000_000
	if testing.Short() {
		n = 300_000
	}
	const sources, capacity = 8, 128
	m := New(Config{DefaultCapacity: capacity, Capacities: map[string]int{"cam": 4}, Events: 64})
	rings := make([]*Ring, sources)
	for i := range rings {
		rings[i] = m.Ring("s" + strconv.Itoa(i))
	}
	cam := m.Ring("cam")
	appendBatch := func(count int) {
		for i := range count {
			switch i % 100 {
			case 0:
				cam.Append(Observation{Kind: BlobRef, Blob: &Blob{MIME: "image/jpeg", Data: make([]byte, 4096)}})
			case 1:
				rings[i%sources].Append(Observation{Kind: Text, Text: "heard " + strconv.Itoa(i)})
			default:
				rings[i%sources].Append(Observation{Kind: Reading, Value: float64(i), Unit: "V"})
			}
			if i%1000 == 0 {
				m.Record(Event{Kind: "tick", Priority: Low, Message: strconv.Itoa(i)})
			}
		}
	}
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}

	appendBatch(n / 10) // fill every ring
	before, statsBefore := heap(), m.Stats()
	appendBatch(n)
	after, stats := heap(), m.Stats()

	if want := sources*capacity + 4; stats.Held != want {
		t.Errorf("held %d observations, want %d", stats.Held, want)
	}
	if stats.Bytes != statsBefore.Bytes {
		// Readings replace readings one for one only on average; allow
		// the text payloads to differ a little.
		if d := stats.Bytes - statsBefore.Bytes; d < -4096 || d > 4096 {
			t.Errorf("bytes held went from %d to %d", statsBefore.Bytes, stats.Bytes)
		}
	}
	if stats.Appended != uint64(n+n/10) {
		t.Errorf("appended = %d, want %d", stats.Appended, n+n/10)
	}
	// Another package's tests or the runtime may move the heap a little;
	// unbounded growth would be hundreds of MB here.
	if after > before+1<<20 {
		t.Errorf("heap grew from %d to %d bytes after %d more appends", before, after, n)
	}
	t.Logf("heap %d → %d bytes; stats %+v", before, after, stats)
}

func TestRingStampsTime(t *testing.T) {
	m := New(Config{})
	r := m.Ring("s")
	before := time.Now()
	r.Append(Observation{Kind: Reading})
	r.clock = r.clock.Add(-2 * rebase) // force a rebase on the next append
	r.Append(Observation{Kind: Reading})
	after := time.Now()
	given := time.Unix(100, 0)
	r.Append(Observation{Kind: Reading, Time: given})
	got := m.Since("s", 0, 0)
	for _, o := range got[:2] {
		if o.Time.Before(before) || o.Time.After(after) {
			t.Errorf("stamped %v, want within [%v, %v]", o.Time, before, after)
		}
	}
	if !got[2].Time.Equal(given) {
		t.Errorf("producer time replaced: %v", got[2].Time)
	}
}

// TestHorizonBoundsTheLogs: events and journal records keep at least
// logFloor entries whatever their age, grow past it only while the oldest
// is within the horizon, and grow again to capacity in a burst.
func TestHorizonBoundsTheLogs(t *testing.T) {
	m := New(Config{DefaultCapacity: 16, Horizon: 10 * time.Minute, Events: 1024, Records: 1024})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 600 { // one a minute for ten hours
		at := t0.Add(time.Duration(i) * time.Minute)
		m.Record(Event{Time: at, Kind: "k", Message: strconv.Itoa(i)})
		m.Note(Record{Time: at, Kind: "k", Data: []byte(`{}`)})
	}
	if n := len(m.Events(0, Low, 0)); n != logFloor {
		t.Fatalf("slow events: %d held, want the floor %d", n, logFloor)
	}
	if n := len(m.Records(0, 0)); n != logFloor {
		t.Fatalf("slow records: %d held, want the floor %d", n, logFloor)
	}
	last := t0.Add(600 * time.Minute)
	for i := range 2000 { // a burst: 20 a second
		at := last.Add(time.Duration(i+1) * 50 * time.Millisecond)
		m.Record(Event{Time: at, Kind: "k", Message: strconv.Itoa(600 + i)})
		m.Note(Record{Time: at, Kind: "k", Data: []byte(`{}`)})
	}
	evs := m.Events(0, Low, 0)
	if len(evs) != 1024 || evs[len(evs)-1].Message != "2599" || evs[0].Message != "1576" {
		t.Fatalf("burst: %d events held, %s … %s", len(evs), evs[0].Message, evs[len(evs)-1].Message)
	}
	if n := len(m.Records(0, 0)); n != 1024 {
		t.Fatalf("burst: %d records held", n)
	}
}
