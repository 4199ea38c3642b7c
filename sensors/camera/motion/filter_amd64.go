//go:build !purego

package motion

import "golang.org/x/sys/cpu"

//go:noescape
func vblurThresholdAVX2(r0, r1, r2, r3, r4 *float32, out *uint8, blocks int, k *[4]float32, lut *[256]uint64) int

//go:noescape
func diffSegsAVX2(cur, bg, out *float32, segs *linear, nseg int, black, white float32)

//go:noescape
func hblurAVX2(r, o *float32, blocks int, k *[3]float32)

//go:noescape
func stretchAVX2(x *float32, blocks int, lo, k float32)

//go:noescape
func blendAVX2(bg, cur *float32, blocks int, alpha float32)

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
	stretch = func(x []float32, lo, k float32) {
		n := len(x) / 8
		if n > 0 {
			stretchAVX2(&x[0], n, lo, k)
		}
		stretchGo(x[8*n:], lo, k)
	}
	blend = func(bg, cur []float32, alpha float32) {
		cur = cur[:len(bg)]
		n := len(bg) / 8
		if n > 0 {
			blendAVX2(&bg[0], &cur[0], n, alpha)
		}
		blendGo(bg[8*n:], cur[8*n:], alpha)
	}
	diffSegs = func(cur, bg, out []float32, segs []linear, black, white float32) {
		if len(segs) == 0 {
			return
		}
		// the bounds the assembly relies on: whole eights from each
		// segment's start
		last := segs[len(segs)-1]
		end := int(last.x0) + (int(last.n)+7)/8*8
		_, _, _ = cur[:end], bg[:end], out[:end]
		diffSegsAVX2(&cur[0], &bg[0], &out[0], &segs[0], len(segs), black, white)
	}
	hblurInterior = func(r, o []float32) int {
		// o[x] for x in 2..len-3, eight at a time
		n := (len(r) - 4) / 8
		if n > 0 {
			_ = r[8*n+3]
			k := [3]float32{k0, k1, k2}
			hblurAVX2(&r[0], &o[2], n, &k)
		}
		return 2 + 8*max(n, 0)
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
