package f32

import (
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"unsafe"
)

// LE views aligned bytes in place on a little-endian machine and copies
// the same bytes at an odd address; both give the same values.
func TestLE(t *testing.T) {
	want := []float32{1, -2.5, float32(math.Inf(1)), 3e-38}
	b := make([]byte, 0, 4*len(want)+1)
	b = append(b, 0)
	for _, v := range want {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
	}
	aligned := append([]byte(nil), b[1:]...) // a fresh allocation: aligned
	odd := b[1:]                             // make's result is aligned, so &b[1] is not
	for name, p := range map[string][]byte{"aligned": aligned, "odd address": odd} {
		got := LE(p)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
		inPlace := unsafe.Pointer(&got[0]) == unsafe.Pointer(&p[0])
		if inPlace != (name == "aligned" && nativeLE) {
			t.Errorf("%s: read in place: %v", name, inPlace)
		}
	}
	if LE(nil) != nil || LE([]byte{1, 2, 3}) != nil {
		t.Error("fewer than 4 bytes give values")
	}
}
