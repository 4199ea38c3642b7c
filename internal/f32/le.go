package f32

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// nativeLE is whether float32s in memory have the little-endian byte
// order the model files store.
var nativeLE = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// LE returns the little-endian float32s in p (len(p)/4 of them): p itself,
// not a copy, when p is aligned and the machine little-endian, so that
// weights embedded in the binary stay in its read-only, file-backed pages
// instead of being copied to the heap (anonymous memory). The result then
// must be treated as read-only, and p kept unchanged, while it is used.
func LE(p []byte) []float32 {
	n := len(p) / 4
	if n == 0 {
		return nil
	}
	if nativeLE && uintptr(unsafe.Pointer(&p[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&p[0])), n)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
	}
	return out
}
