package worldmodel

import (
	"testing"
	"time"
	"unsafe"
)

// TestSlotKeepsEveryField stores every combination of the payload fields
// through a ring and reads each back whole, whether it fits a slot or
// spills.
func TestSlotKeepsEveryField(t *testing.T) {
	if n := unsafe.Sizeof(slot{}); n != 72 {
		t.Fatalf("a slot is %d bytes; the ring's memory figures assume 72", n)
	}
	blob := &Blob{MIME: "image/jpeg", Data: []byte{1, 2, 3}}
	ev := &Event{Kind: "motion_start", Source: "cam"}
	m := New(Config{DefaultCapacity: 4})
	r := m.Ring("s")
	var want []Observation
	for mask := range 16 {
		o := Observation{Time: time.Unix(1700000000, int64(mask)), Kind: Kind(mask%4 + 1), Value: float64(mask) + 0.5}
		if mask&1 != 0 {
			o.Unit = "V"
		}
		if mask&2 != 0 {
			o.Text = "hello"
		}
		if mask&4 != 0 {
			o.Blob = blob
		}
		if mask&8 != 0 {
			o.Event = ev
		}
		o.Seq = r.Append(o)
		o.Source = "s"
		want = append(want, o)
		got, ok := m.Latest("s")
		if !ok || got != o {
			t.Fatalf("fields %04b: read back %+v, stored %+v", mask, got, o)
		}
	}
	got := m.Since("s", 0, 0)
	if len(got) != 4 {
		t.Fatalf("ring of 4 holds %d", len(got))
	}
	for i, o := range got {
		if w := want[12+i]; o != w {
			t.Fatalf("oldest+%d: %+v, want %+v", i, o, w)
		}
	}
}
