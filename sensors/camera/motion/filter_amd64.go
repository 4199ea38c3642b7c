//go:build !purego

package motion

import "golang.org/x/sys/cpu"

//go:noescape
func vblurThresholdAVX2(r0, r1, r2, r3, r4 *float32, out *uint8, blocks int, k *[4]float32, lut *[256]uint64) int

// bitBytes[m] has byte i set to bit i of m: an 8-bit compare mask as eight
// 0/1 bytes.
var bitBytes [256]uint64

func init() {
	if !cpu.X86.HasAVX2 || !cpu.X86.HasPOPCNT {
		return
	}
	for m := range bitBytes {
		for i := range 8 {
			bitBytes[m] |= uint64(m>>i&1) << (8 * i)
		}
	}
	vblurThreshold = func(r0, r1, r2, r3, r4 []float32, o []uint8, thr float32) int {
		n := len(o) / 8
		count := 0
		if n > 0 {
			// the bounds the assembly relies on
			_, _, _, _, _ = r0[8*n-1], r1[8*n-1], r2[8*n-1], r3[8*n-1], r4[8*n-1]
			k := [4]float32{k0, k1, k2, thr}
			count = vblurThresholdAVX2(&r0[0], &r1[0], &r2[0], &r3[0], &r4[0], &o[0], n, &k, &bitBytes)
		}
		m := 8 * n
		return count + vblurThresholdGo(r0[m:], r1[m:], r2[m:], r3[m:], r4[m:], o[m:], thr)
	}
}
