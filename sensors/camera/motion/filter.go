package motion

import (
	"encoding/binary"
	"math"
)

// The blur is the separable binomial kernel [1 4 6 4 1]/16, a Gaussian
// of σ≈1 and radius 2 as in Frigate (and OpenCV's fixed 5-tap kernel),
// repeating the border pixels.
const k0, k1, k2 = 1.0 / 16, 4.0 / 16, 6.0 / 16

// hblur5 blurs one row r into o (both w long).
func hblur5(r, o []float32) {
	w := len(r)
	o = o[:w]
	if w < 5 {
		for x := range o {
			o[x] = k0*r[clampi(x-2, w)] + k1*r[clampi(x-1, w)] + k2*r[x] + k1*r[clampi(x+1, w)] + k0*r[clampi(x+2, w)]
		}
		return
	}
	o[0] = k0*r[0] + k1*r[0] + k2*r[0] + k1*r[1] + k0*r[2]
	o[1] = k0*r[0] + k1*r[0] + k2*r[1] + k1*r[2] + k0*r[3]
	for x := hblurInterior(r, o); x < w-2; x++ {
		s := r[x-2 : x+3 : x+3]
		o[x] = k0*(s[0]+s[4]) + k1*(s[1]+s[3]) + k2*s[2]
	}
	o[w-2] = k0*r[w-4] + k1*r[w-3] + k2*r[w-2] + k1*r[w-1] + k0*r[w-1]
	o[w-1] = k0*r[w-3] + k1*r[w-2] + k2*r[w-1] + k1*r[w-1] + k0*r[w-1]
}

// stretch maps x to (x − lo)·k, and blend moves bg towards cur by alpha
// (bg += alpha·(cur − bg)); vector versions replace them where the CPU has
// a vector unit, with the same float32 operations.
var (
	stretch = stretchGo
	blend   = blendGo
)

func stretchGo(x []float32, lo, k float32) {
	for i, v := range x {
		x[i] = (v - lo) * k
	}
}

func blendGo(bg, cur []float32, alpha float32) {
	cur = cur[:len(bg)]
	for i, v := range cur {
		bg[i] += alpha * (v - bg[i])
	}
}

// hblurInterior blurs what it can of a row's interior with a vector unit,
// where the CPU has one (the same float32 operations as hblur5), and
// returns the first pixel it left to the caller.
var hblurInterior = func(r, o []float32) int { return 2 }

// diffBlurThreshold is three steps fused into two passes, so that the
// difference and its blurred copy never go through memory whole:
//
//	diff = cur − clamp((bg − o)·ig, black, white)   (o, ig: lt's map, per pixel)
//	blurred = blur5(diff)
//	bin = |blurred| > thr
//
// It returns the number of pixels set. tmp holds w×h values, row w.
func diffBlurThreshold(cur, bg, tmp, row []float32, bin []uint8, w, h int, lt *lighting, black, white, thr float32) int {
	n := w * h
	cur, bg, tmp, bin, row = cur[:n], bg[:n], tmp[:n], bin[:n], row[:w]
	for y := 0; y < h; y++ {
		lt.diffRow(y, cur[y*w:(y+1)*w], bg[y*w:(y+1)*w], row, black, white)
		hblur5(row, tmp[y*w:(y+1)*w])
	}
	count := 0
	for y := 0; y < h; y++ {
		count += vblurThreshold(
			tmp[clampi(y-2, h)*w:][:w], tmp[clampi(y-1, h)*w:][:w], tmp[y*w:][:w],
			tmp[clampi(y+1, h)*w:][:w], tmp[clampi(y+2, h)*w:][:w],
			bin[y*w:][:w], thr)
	}
	return count
}

// vblurThreshold is the vertical blur of five rows and the threshold, into
// o (0 or 1) with the count of ones; a vector version replaces it where the
// CPU has one, with the same results.
var vblurThreshold = vblurThresholdGo

func vblurThresholdGo(r0, r1, r2, r3, r4 []float32, o []uint8, thr float32) int {
	w := len(o)
	r0, r1, r2, r3, r4 = r0[:w], r1[:w], r2[:w], r3[:w], r4[:w]
	tb := math.Float32bits(thr)
	count := 0
	for x := range o {
		e := k0*(r0[x]+r4[x]) + k1*(r1[x]+r3[x]) + k2*r2[x]
		// |e| > thr without branches: the bits of non-negative floats
		// order as the floats do, and tb − |e|'s bits wraps into the
		// sign bit exactly when |e| is the larger
		v := uint8((tb - math.Float32bits(e)&0x7FFFFFFF) >> 31)
		o[x] = v
		count += int(v)
	}
	return count
}

func clampi(i, n int) int {
	if i < 0 {
		return 0
	}
	if i >= n {
		return n - 1
	}
	return i
}

// dilate3 replaces each pixel of bin (w×h, values 0 or 1) by the maximum
// of its 3×3 neighbourhood, which closes the gaps between the changed
// pixels of one moving thing so that it forms one region.
func dilate3(bin, tmp []uint8, w, h int) {
	n := w * h
	bin, tmp = bin[:n], tmp[:n]
	for y := 0; y < h; y++ {
		r := bin[y*w:][:w]
		o := tmp[y*w:][:w]
		// horizontal: eight pixels at a time, each or-ed with its
		// neighbours by shifting the word a byte either way; the bytes
		// shifted in come from the words before and after
		x := 0
		for ; x+8 <= w; x += 8 {
			v := binary.LittleEndian.Uint64(r[x:])
			u := v | v<<8 | v>>8
			if x > 0 {
				u |= uint64(r[x-1])
			}
			if x+8 < w {
				u |= uint64(r[x+8]) << 56
			}
			binary.LittleEndian.PutUint64(o[x:], u)
		}
		for ; x < w; x++ {
			v := r[x]
			if x > 0 {
				v |= r[x-1]
			}
			if x+1 < w {
				v |= r[x+1]
			}
			o[x] = v
		}
	}
	// vertical: eight pixels at a time
	for y := 0; y < h; y++ {
		r1 := tmp[y*w:][:w]
		r0, r2 := r1, r1
		if y > 0 {
			r0 = tmp[(y-1)*w:][:w]
		}
		if y+1 < h {
			r2 = tmp[(y+1)*w:][:w]
		}
		o := bin[y*w:][:w]
		x := 0
		for ; x+8 <= w; x += 8 {
			v := binary.LittleEndian.Uint64(r0[x:]) | binary.LittleEndian.Uint64(r1[x:]) | binary.LittleEndian.Uint64(r2[x:])
			binary.LittleEndian.PutUint64(o[x:], v)
		}
		for ; x < w; x++ {
			o[x] = r0[x] | r1[x] | r2[x]
		}
	}
}
