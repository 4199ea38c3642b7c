package worldmodel

import "testing"

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

func BenchmarkWatchedNobody(b *testing.B) {
	m := New(Config{})
	for b.Loop() {
		_ = m.Watched("cam.live")
	}
}
