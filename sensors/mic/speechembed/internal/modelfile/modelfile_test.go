package modelfile

import (
	"encoding/binary"
	"errors"
	"slices"
	"testing"
	"unsafe"
)

func TestRoundTrip(t *testing.T) {
	in := []Tensor{{Name: "a", Dims: []int{2, 3}, Data: []float32{1, 2, 3, 4, 5, -6}}, {Name: "b", Dims: []int{1}, Data: []float32{0.5}}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range in {
		got := out[want.Name]
		if !slices.Equal(got.Dims, want.Dims) || !slices.Equal(got.Data, want.Data) {
			t.Fatalf("%s: got %+v", want.Name, got)
		}
	}
	for i := range b {
		c := slices.Clone(b)
		c[i] ^= 0x40
		if _, err := Decode(c); !errors.Is(err, ErrDamaged) {
			t.Fatalf("byte %d flipped: err = %v", i, err)
		}
	}
	if _, err := Encode([]Tensor{{Name: "x", Dims: []int{3}, Data: []float32{1}}}); err == nil {
		t.Fatal("a shape that does not match its data was encoded")
	}
}

func TestArchIsTheEmbeddingNetwork(t *testing.T) {
	convs, pools := 0, 0
	for _, op := range Arch {
		if op.Cout != 0 {
			convs++
		} else {
			pools++
		}
	}
	if convs != 20 || pools != 5 || Arch[len(Arch)-1].Cout != 96 || Arch[len(Arch)-1].Act {
		t.Fatalf("Arch has %d convolutions and %d pools", convs, pools)
	}
}

// Values are aligned in the file, so a file at an aligned address is read
// in place; at an odd address the values are copied, and equal.
func TestDecodeReadsAlignedValuesInPlace(t *testing.T) {
	in := []Tensor{{Name: "odd", Dims: []int{3}, Data: []float32{1, -2, 3}}, {Name: "ab", Dims: []int{1, 2}, Data: []float32{4, 5}}}
	b, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	within := func(buf []byte, f []float32) bool {
		p := uintptr(unsafe.Pointer(&f[0]))
		lo := uintptr(unsafe.Pointer(&buf[0]))
		return p >= lo && p < lo+uintptr(len(buf))
	}
	shifted := append(make([]byte, 1, len(b)+1), b...)[1:] // the same bytes at an odd address
	littleEndian := binary.NativeEndian.Uint16([]byte{1, 0}) == 1
	for name, buf := range map[string][]byte{"aligned": b, "odd address": shifted} {
		out, err := Decode(buf)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, want := range in {
			got := out[want.Name].Data
			if !slices.Equal(got, want.Data) {
				t.Fatalf("%s: %s = %v", name, want.Name, got)
			}
			if inPlace := within(buf, got); inPlace != (name == "aligned" && littleEndian) {
				t.Errorf("%s: %s read in place: %v", name, want.Name, inPlace)
			}
		}
	}
}
