package wakeword

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"
	"unsafe"
)

// unpadded rewrites a head file as files were written before the header
// was padded: the weights then start at an unaligned offset.
func unpadded(t *testing.T, file []byte) []byte {
	n := int(binary.LittleEndian.Uint32(file[6:]))
	js := bytes.TrimRight(file[10:10+n], " ")
	if (10+len(js))%4 == 0 {
		t.Fatal("the header needed no padding: nothing to test")
	}
	out := append([]byte(nil), file[:6]...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(js)))
	out = append(out, js...)
	out = append(out, file[10+n:len(file)-4]...)
	return binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(out))
}

// The built-in head's weights are the binary's own bytes, not a heap
// copy, and it scores bit for bit as the same head read from an older,
// unaligned file (whose weights are copied).
func TestBuiltinHeadReadInPlace(t *testing.T) {
	h, err := Builtin()
	if err != nil {
		t.Fatal(err)
	}
	file, err := builtinHeadBytes()
	if err != nil {
		t.Fatal(err)
	}
	lo := uintptr(unsafe.Pointer(&file[0]))
	for i, l := range h.layers {
		for _, v := range [][]float32{l.W, l.B} {
			if p := uintptr(unsafe.Pointer(&v[0])); p < lo || p >= lo+uintptr(len(file)) {
				t.Errorf("layer %d: weights copied out of the binary", i+1)
			}
		}
	}
	old, err := decodeHead(unpadded(t, bytes.Clone(file)))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, WindowLen*EmbedDim)
	for k := range 20 {
		for i := range x {
			x[i] = float32((i*7+k*13)%29)/7 - 2
		}
		if a, b := h.Score(x), old.Score(x); a != b {
			t.Fatalf("window %d: %v in place, %v from the older file", k, a, b)
		}
	}
}
