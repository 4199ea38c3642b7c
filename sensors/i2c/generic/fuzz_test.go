package generic

import (
	"math"
	"testing"
)

// FuzzCodec: any layout a board file can give the generic kind, and any
// bytes a device answers: a layout NewCodec accepts decodes without a
// panic to a finite value, and encoding that value gives bytes that decode
// to it again (the simulated device relies on it).
func FuzzCodec(f *testing.F) {
	f.Add(2, "big", true, 4, 12, 0.0625, 0.0, []byte{0x19, 0x00})   // TMP102
	f.Add(2, "little", false, 0, 0, 1.0, -40.0, []byte{0xff, 0x7f}) // plain little-endian
	f.Add(8, "big", true, 0, 64, 1e-3, 0.0, []byte{0x80, 0, 0, 0, 0, 0, 0, 1})
	f.Add(3, "big", false, 23, 1, -2.5, 7.0, []byte{0x80, 0x00, 0x00}) // one bit, negative scale
	f.Add(1, "middle", false, 9, 0, 0.0, 0.0, []byte{1})               // invalid
	f.Fuzz(func(t *testing.T, length int, order string, signed bool, shift, bits int, scale, offset float64, b []byte) {
		c, err := NewCodec(Reading{Length: length, Order: order, Signed: signed, Shift: shift, Bits: bits, Scale: &scale, Offset: offset})
		if err != nil || len(b) < length || math.IsNaN(scale) || math.IsNaN(offset) || math.IsInf(offset, 0) {
			return
		}
		v := c.Decode(b)
		if math.IsNaN(v) {
			t.Fatalf("%v decodes % x to NaN", c, b)
		}
		if math.IsInf(v, 0) || math.Abs(v) > 1e300 || math.Abs(scale) < 1e-300 {
			return // beyond float64's precision: nothing to compare
		}
		again := c.Decode(c.Encode(v))
		if tol := 1e-9 * max(math.Abs(v), math.Abs(scale)); math.Abs(again-v) > tol {
			t.Fatalf("%+v: % x decodes to %v, encoded and decoded again to %v", c, b[:length], v, again)
		}
	})
}
