package worldmodel

import (
	"strings"
	"testing"
	"time"
)

func TestWatch(t *testing.T) {
	m := New(Config{})
	if m.Watched("cam.live") {
		t.Fatal("watched before anyone watches")
	}
	stop1 := m.Watch("cam.live")
	stop2 := m.Watch("cam.live")
	if !m.Watched("cam.live") || m.Watched("other.live") {
		t.Fatal("Watched does not follow Watch")
	}
	stop1()
	stop1() // a second call must not release someone else's watch
	if !m.Watched("cam.live") {
		t.Fatal("one of two watches released, but the source is no longer watched")
	}
	stop2()
	if m.Watched("cam.live") {
		t.Fatal("still watched after every watch was released")
	}
}

// What is produced only while watched stays out of the summary the agent
// reads, during the watch and after it: a decision must not depend on
// whether someone had a page open.
func TestSummaryLeavesOutWatchedSources(t *testing.T) {
	m := New(Config{})
	now := time.Now()
	m.Append(Observation{Time: now, Source: "env.temperature", Kind: Reading, Value: 21, Unit: "°C"})
	before := m.SummaryAt(now, 0)
	stop := m.Watch("cam.live")
	m.Append(Observation{Source: "cam.live", Kind: BlobRef, Blob: &Blob{MIME: "image/jpeg", Data: make([]byte, 100)}})
	during := m.SummaryAt(now, 0)
	stop()
	if after := m.SummaryAt(now, 0); during != before || after != before || strings.Contains(after, "cam.live") {
		t.Fatalf("before:\n%s\nduring:\n%s\nafter:\n%s", before, during, after)
	}
	if _, ok := m.Latest("cam.live"); !ok {
		t.Fatal("the live frame is not kept for its watchers")
	}
}

func BenchmarkWatchedNobody(b *testing.B) {
	m := New(Config{})
	for b.Loop() {
		_ = m.Watched("cam.live")
	}
}
