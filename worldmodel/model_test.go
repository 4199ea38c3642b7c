package worldmodel

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func reading(source string, v float64, at time.Duration) Observation {
	return Observation{Source: source, Kind: Reading, Value: v, Unit: "V", Time: t0.Add(at)}
}

func values(obs []Observation) []string {
	var out []string
	for _, o := range obs {
		out = append(out, fmt.Sprintf("%s=%g", o.Source, o.Value))
	}
	return out
}

func TestQueries(t *testing.T) {
	m := New(Config{DefaultCapacity: 3})
	var seqs []uint64
	for i, o := range []Observation{
		reading("b", 1, 1*time.Second),
		reading("a", 2, 2*time.Second),
		reading("b", 3, 3*time.Second),
		reading("a", 4, 4*time.Second),
		reading("b", 5, 5*time.Second),
		reading("b", 6, 6*time.Second), // evicts b=1
	} {
		seq := m.Append(o)
		if i > 0 && seq <= seqs[i-1] {
			t.Fatalf("seq %d after %d", seq, seqs[i-1])
		}
		seqs = append(seqs, seq)
	}

	if o, ok := m.Latest("b"); !ok || o.Value != 6 || o.Seq != seqs[5] || o.Source != "b" {
		t.Errorf("Latest(b) = %+v, %v", o, ok)
	}
	if _, ok := m.Latest("nope"); ok {
		t.Error("Latest of an unknown source")
	}
	if got, want := values(m.LatestAll()), []string{"a=4", "b=6"}; !slices.Equal(got, want) {
		t.Errorf("LatestAll = %v, want %v", got, want)
	}
	if got, want := m.Sources(), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Errorf("Sources = %v, want %v", got, want)
	}

	for _, c := range []struct {
		source string
		after  uint64
		limit  int
		want   []string
	}{
		{"b", 0, 0, []string{"b=3", "b=5", "b=6"}},
		{"b", seqs[2], 0, []string{"b=5", "b=6"}},
		{"b", 0, 2, []string{"b=3", "b=5"}},
		{"b", seqs[5], 0, nil},
		{"", 0, 0, []string{"a=2", "b=3", "a=4", "b=5", "b=6"}},
		{"", seqs[2], 0, []string{"a=4", "b=5", "b=6"}},
		{"", 0, 3, []string{"a=2", "b=3", "a=4"}},
		{"", seqs[1], 1, []string{"b=3"}},
		{"nope", 0, 0, nil},
	} {
		if got := values(m.Since(c.source, c.after, c.limit)); !slices.Equal(got, c.want) {
			t.Errorf("Since(%q, %d, %d) = %v, want %v", c.source, c.after, c.limit, got, c.want)
		}
	}

	for _, c := range []struct {
		source   string
		from, to time.Duration // -1: zero time (open)
		want     []string
	}{
		{"b", 3 * time.Second, 5 * time.Second, []string{"b=3", "b=5"}},
		{"b", -1, 4 * time.Second, []string{"b=3"}},
		{"b", 5 * time.Second, -1, []string{"b=5", "b=6"}},
		{"", 2 * time.Second, 5 * time.Second, []string{"a=2", "b=3", "a=4", "b=5"}},
		{"", -1, -1, []string{"a=2", "b=3", "a=4", "b=5", "b=6"}},
		{"", 7 * time.Second, -1, nil},
		{"nope", -1, -1, nil},
	} {
		at := func(d time.Duration) time.Time {
			if d < 0 {
				return time.Time{}
			}
			return t0.Add(d)
		}
		if got := values(m.Window(c.source, at(c.from), at(c.to))); !slices.Equal(got, c.want) {
			t.Errorf("Window(%q, %v, %v) = %v, want %v", c.source, c.from, c.to, got, c.want)
		}
	}
}

func TestWindowUnorderedTimes(t *testing.T) {
	m := New(Config{})
	// A producer may deliver late samples: times need not follow Seq.
	m.Append(reading("s", 1, 5*time.Second))
	m.Append(reading("s", 2, 1*time.Second))
	m.Append(reading("s", 3, 3*time.Second))
	if got, want := values(m.Window("s", t0.Add(2*time.Second), t0.Add(6*time.Second))), []string{"s=1", "s=3"}; !slices.Equal(got, want) {
		t.Errorf("Window = %v, want %v", got, want)
	}
}

func TestEvents(t *testing.T) {
	m := New(Config{Events: 4})
	var recorded []Event
	for i, p := range []Priority{Low, High, Normal, Critical, Low, High} {
		e := m.Record(Event{Kind: fmt.Sprintf("k%d", i), Source: "s", Priority: p})
		if e.Seq == 0 || e.Time.IsZero() {
			t.Fatalf("Record did not assign seq/time: %+v", e)
		}
		if i > 0 && e.Seq <= recorded[i-1].Seq {
			t.Fatalf("event seq %d after %d", e.Seq, recorded[i-1].Seq)
		}
		recorded = append(recorded, e)
	}
	kinds := func(es []Event) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Kind)
		}
		return out
	}
	for _, c := range []struct {
		since uint64
		min   Priority
		limit int
		want  []string
	}{
		{0, Low, 0, []string{"k2", "k3", "k4", "k5"}}, // log holds the last 4
		{0, High, 0, []string{"k3", "k5"}},
		{0, Critical, 0, []string{"k3"}},
		{recorded[3].Seq, Low, 0, []string{"k4", "k5"}},
		{0, Low, 2, []string{"k4", "k5"}}, // limit keeps the newest
		{0, Normal, 1, []string{"k5"}},
		{recorded[5].Seq, Low, 0, nil},
	} {
		if got := kinds(m.Events(c.since, c.min, c.limit)); !slices.Equal(got, c.want) {
			t.Errorf("Events(%d, %v, %d) = %v, want %v", c.since, c.min, c.limit, got, c.want)
		}
	}
	if s := m.Stats(); s.Events != 6 {
		t.Errorf("Stats.Events = %d, want 6", s.Events)
	}
	given := t0
	if e := m.Record(Event{Kind: "x", Time: given}); !e.Time.Equal(given) {
		t.Errorf("Record replaced the event's time: %v", e.Time)
	}
}

func TestMaxSources(t *testing.T) {
	m := New(Config{MaxSources: 2})
	if m.Append(reading("a", 1, 0)) == 0 || m.Append(reading("b", 1, 0)) == 0 {
		t.Fatal("appends within MaxSources dropped")
	}
	if seq := m.Append(reading("c", 1, 0)); seq != 0 {
		t.Errorf("append to a third source got seq %d, want 0", seq)
	}
	r := m.Ring("d")
	if r == nil {
		t.Fatal("Ring returned nil")
	}
	if seq := r.Append(Observation{Kind: Reading}); seq != 0 {
		t.Errorf("append through an over-limit ring got seq %d", seq)
	}
	if seq := m.Append(Observation{Kind: Reading}); seq != 0 {
		t.Errorf("append without a source got seq %d", seq)
	}
	if m.Append(reading("a", 2, 0)) == 0 {
		t.Error("existing source dropped after the limit was reached")
	}
	for i := range 3 {
		m.SetActuator(fmt.Sprint("act", i), "on")
		m.SetHealth(fmt.Sprint("comp", i), "degraded")
	}
	if len(m.Actuators()) != 2 || len(m.Health()) != 2 {
		t.Errorf("actuators %v, health %v: want 2 of each", m.Actuators(), m.Health())
	}
	s := m.Stats()
	if s.Sources != 2 || s.Dropped != 5 || s.Appended != 3 {
		t.Errorf("Stats = %+v, want 2 sources, 5 dropped, 3 appended", s)
	}
	if got := m.Sources(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("Sources = %v", got)
	}
}

func TestActuatorsAndHealth(t *testing.T) {
	m := New(Config{})
	m.SetActuator("headlight", "on")
	m.SetActuator("pan", "angle=90")
	m.SetActuator("pan", "") // forgotten
	m.SetHealth("env", "degraded: i2c NACK")
	m.SetHealth("mic", "")
	if got := m.Actuators(); len(got) != 1 || got["headlight"] != "on" {
		t.Errorf("Actuators = %v", got)
	}
	if got := m.Health(); len(got) != 2 || got["env"] != "degraded: i2c NACK" || got["mic"] != "ok" {
		t.Errorf("Health = %v", got)
	}
	m.Actuators()["headlight"] = "off" // a copy
	if m.Actuators()["headlight"] != "on" {
		t.Error("Actuators returned the model's own map")
	}
}

func TestVersion(t *testing.T) {
	m := New(Config{MaxSources: 1})
	v := m.Version()
	changed := func(what string, f func()) {
		t.Helper()
		f()
		if nv := m.Version(); nv == v {
			t.Errorf("%s: Version stayed %d", what, v)
		} else {
			v = nv
		}
	}
	same := func(what string, f func()) {
		t.Helper()
		f()
		if nv := m.Version(); nv != v {
			t.Errorf("%s: Version changed %d → %d", what, v, nv)
			v = nv
		}
	}
	changed("append", func() { m.Append(reading("a", 1, 0)) })
	changed("record", func() { m.Record(Event{Kind: "x"}) })
	changed("actuator", func() { m.SetActuator("led", "on") })
	same("same actuator state", func() { m.SetActuator("led", "on") })
	changed("actuator change", func() { m.SetActuator("led", "off") })
	changed("actuator forgotten", func() { m.SetActuator("led", "") })
	same("unknown actuator forgotten", func() { m.SetActuator("nope", "") })
	changed("health", func() { m.SetHealth("env", "degraded") })
	same("same health", func() { m.SetHealth("env", "degraded") })
	same("dropped append", func() { m.Append(reading("b", 1, 0)) })
	same("reads", func() { m.Summary(0); m.Since("", 0, 0); m.Stats() })
}

// TestConcurrent runs writers on shared and own sources against readers of
// every query, under -race. A cursor reader following Since("", …) must see
// every observation exactly once, in Seq order: the rings are large enough
// that nothing is overwritten.
func TestConcurrent(t *testing.T) {
	const writers, perWriter = 4, 5000
	m := New(Config{DefaultCapacity: writers * perWriter, Events: 64})
	var wg, readers sync.WaitGroup
	done := make(chan struct{})

	seen := make(map[uint64]bool)
	var cursor uint64
	follow := func() (n int) {
		obs := m.Since("", cursor, 100)
		for _, o := range obs {
			if o.Seq <= cursor || seen[o.Seq] {
				t.Errorf("Since returned seq %d after cursor %d", o.Seq, cursor)
			}
			seen[o.Seq] = true
			cursor = o.Seq
		}
		return len(obs)
	}
	// read runs fn on a reader goroutine over and over until done.
	read := func(fn func()) {
		readers.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
					fn()
				}
			}
		})
	}
	read(func() { follow() })
	read(func() {
		for _, src := range m.Sources() {
			obs := m.Since(src, 0, 0)
			for i := 1; i < len(obs); i++ {
				if obs[i].Seq <= obs[i-1].Seq {
					t.Errorf("%s: seq %d after %d", src, obs[i].Seq, obs[i-1].Seq)
				}
			}
		}
		m.LatestAll()
		m.Window("", t0, time.Time{})
		m.Events(0, High, 10)
		m.Actuators()
		m.Health()
		m.Stats()
		if s := m.Summary(512); len(s) > 512 {
			t.Errorf("summary of %d bytes", len(s))
		}
	})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own := m.Ring(fmt.Sprint("own", w))
			for i := range perWriter {
				if i%2 == 0 {
					own.Append(Observation{Kind: Reading, Value: float64(i)})
				} else {
					m.Append(Observation{Source: "shared", Kind: Reading, Value: float64(i)})
				}
				if i%100 == 0 {
					m.Record(Event{Kind: "tick", Priority: Priority(i % 4)})
					m.SetActuator(fmt.Sprint("act", w), fmt.Sprint(i))
					m.SetHealth("shared", fmt.Sprint("degraded ", i))
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	readers.Wait()
	for follow() > 0 {
	}
	if len(seen) != writers*perWriter {
		t.Errorf("cursor reader saw %d observations, want %d", len(seen), writers*perWriter)
	}
	if s := m.Stats(); s.Appended != writers*perWriter || s.Held != writers*perWriter {
		t.Errorf("Stats = %+v", s)
	}
}
