package motion

import (
	"encoding/binary"
	"fmt"
)

// scaler downscales a luma plane by area averaging: every input pixel
// contributes to exactly one output pixel. Averaging (rather than the
// nearest-neighbour sampling a faster resize would do) is what makes the
// detector robust to sensor noise: a 640×480 frame at 100 rows averages
// about 23 pixels into each output pixel, dividing the noise by ~5.
//
// Reading every input byte is the detector's main cost, so the input is
// read eight pixels at a time as a uint64 and summed in 16-bit lanes that
// stay in registers while walking down an output row's span of input rows
// (four such words at once, to keep the core busy); adding the even and
// odd lanes gives the sums of pixel pairs. Column spans start at even
// pixels so that a pair never straddles two outputs. The pair sums are
// stored as a running (prefix) sum, so that an output pixel is one
// subtraction whatever its span: spans of 1 and 2 pairs alternating
// irregularly made a loop over them mispredict at nearly every pixel.
type scaler struct {
	w, h, sw, sh int
	xs, ys       []int     // span boundaries: output x covers input xs[x]..xs[x+1]
	ps           []int     // the same in pairs (wide) or pixels (narrow), into cum
	invW         []float32 // 1 / span width, per output column
	cum          []uint32  // cum[i]: sum of pairs (pixels when narrow) 0..i-1 over the row span
	pairs        []uint32  // per pair, for the tail and for spans over 128 rows
	p16          []uint16  // per pair, from pairSums
	hists        [4][256]int32
	// narrow: less than 2× horizontal reduction, where pair-aligned spans
	// would not fit; sums per pixel instead.
	narrow bool
}

func (s *scaler) init(w, h, sw, sh int) error {
	if sw > w || sh > h || sw < 1 || sh < 1 {
		return fmt.Errorf("motion: cannot downscale %dx%d to %dx%d", w, h, sw, sh)
	}
	s.w, s.h, s.sw, s.sh = w, h, sw, sh
	s.narrow = sw > w/2
	s.xs, s.ys, s.ps = make([]int, sw+1), make([]int, sh+1), make([]int, sw+1)
	for i := range s.ys {
		s.ys[i] = i * h / sh
	}
	for i := range s.xs {
		if s.narrow {
			s.xs[i] = i * w / sw
		} else {
			s.xs[i] = 2 * (i * (w / 2) / sw)
		}
	}
	s.xs[sw] = w // an odd last pixel joins the last span
	for i, x := range s.xs {
		if s.narrow {
			s.ps[i] = x
		} else {
			s.ps[i] = (x + 1) / 2
		}
	}
	s.invW = make([]float32, sw)
	for x := range s.invW {
		s.invW[x] = 1 / float32(s.xs[x+1]-s.xs[x])
	}
	s.cum = make([]uint32, w+1)
	s.pairs = make([]uint32, (w+1)/2)
	s.p16 = make([]uint16, (w+1)/2)
	return nil
}

const lanes = 0x00FF00FF00FF00FF

// pairSums, where the CPU has a vector unit for it (AVX2 on amd64), sums
// each pair of adjacent pixels of blocks 32-byte blocks along a row over
// rows rows (1..128) into 16·blocks uint16: sixteen pairs per instruction
// where the 64-bit lanes below do four. Nil elsewhere.
var pairSums func(dst []uint16, src []byte, stride, rows, blocks int)

// put4 appends the four 16-bit lanes of a to the running sum in q[0..3].
func put4(q []uint32, run uint32, a uint64) uint32 {
	q = q[:4]
	run += uint32(a & 0xFFFF)
	q[0] = run
	run += uint32(a >> 16 & 0xFFFF)
	q[1] = run
	run += uint32(a >> 32 & 0xFFFF)
	q[2] = run
	run += uint32(a >> 48)
	q[3] = run
	return run
}

// run downscales src into dst (sw×sh) and fills hist with the histogram of
// dst's values rounded to integers.
func (s *scaler) run(src []byte, stride int, dst []float32, hist *[256]int32) {
	if s.narrow {
		s.runNarrow(src, stride, dst, hist)
		return
	}
	w := s.w
	words := w / 8
	cum := s.cum
	for oy := 0; oy < s.sh; oy++ {
		y0, y1 := s.ys[oy], s.ys[oy+1]
		// rows y0..y1-1, without the bytes after the last row's end
		rows := src[y0*stride : (y1-1)*stride+w]
		span := y1 - y0
		k := 0
		var run uint32
		if blocks := w / 32; pairSums != nil && span <= 128 && blocks > 0 {
			p16 := s.p16[:16*blocks]
			pairSums(p16, rows, stride, span, blocks)
			c := cum[1 : len(p16)+1]
			c = c[:len(p16)] // lets the compiler drop the bounds checks
			for i, p := range p16 {
				run += uint32(p)
				c[i] = run
			}
			k = 4 * blocks
		}
		if span <= 128 { // a lane holds 128 rows of pixel pairs (128·510 < 65536)
			// Four words per iteration: four independent sums in flight.
			end := span * stride
			for ; k+4 <= words; k += 4 {
				var a, b, c, d uint64
				for off := 8 * k; off < end; off += stride {
					r := rows[off : off+32 : off+32]
					v0 := binary.LittleEndian.Uint64(r)
					v1 := binary.LittleEndian.Uint64(r[8:])
					v2 := binary.LittleEndian.Uint64(r[16:])
					v3 := binary.LittleEndian.Uint64(r[24:])
					a += v0&lanes + (v0>>8)&lanes
					b += v1&lanes + (v1>>8)&lanes
					c += v2&lanes + (v2>>8)&lanes
					d += v3&lanes + (v3>>8)&lanes
				}
				q := cum[4*k+1 : 4*k+17 : 4*k+17]
				run = put4(q, run, a)
				run = put4(q[4:], run, b)
				run = put4(q[8:], run, c)
				run = put4(q[12:], run, d)
			}
			for ; k < words; k++ {
				var a uint64
				for off := 8 * k; off < end; off += stride {
					v := binary.LittleEndian.Uint64(rows[off : off+8 : off+8])
					a += v&lanes + (v>>8)&lanes
				}
				run = put4(cum[4*k+1:], run, a)
			}
		}
		// The tail after the last whole word, and every pair when spans
		// are too tall for the lanes (frames over 128× FrameHeight).
		pairs := s.pairs[4*k:]
		clear(pairs)
		for y := y0; y < y1; y++ {
			row := src[y*stride+8*k : y*stride+w]
			for x, v := range row {
				pairs[x/2] += uint32(v)
			}
		}
		for i, p := range pairs {
			run += p
			cum[4*k+i+1] = run
		}
		s.output(dst[oy*s.sw:(oy+1)*s.sw], 1/float32(y1-y0))
	}
	s.mergeHist(hist)
}

// output turns the row span's prefix sums into one output row, and counts
// its values into the four histograms in turn: neighbours mostly fall in
// one bin, and incrementing one counter back to back waits for each
// store to land before the next load.
func (s *scaler) output(out []float32, invH float32) {
	cum := s.cum
	ps := s.ps[:len(out)+1]
	invW := s.invW[:len(out)]
	h := &s.hists
	ox := 0
	for ; ox+4 <= len(out); ox += 4 {
		q, p, iw := out[ox:ox+4:ox+4], ps[ox:ox+5:ox+5], invW[ox:ox+4:ox+4]
		c0, c1, c2, c3, c4 := cum[p[0]], cum[p[1]], cum[p[2]], cum[p[3]], cum[p[4]]
		v0 := float32(c1-c0) * iw[0] * invH
		v1 := float32(c2-c1) * iw[1] * invH
		v2 := float32(c3-c2) * iw[2] * invH
		v3 := float32(c4-c3) * iw[3] * invH
		q[0], q[1], q[2], q[3] = v0, v1, v2, v3
		h[0][uint8(v0+0.5)]++
		h[1][uint8(v1+0.5)]++
		h[2][uint8(v2+0.5)]++
		h[3][uint8(v3+0.5)]++
	}
	for ; ox < len(out); ox++ {
		v := float32(cum[ps[ox+1]]-cum[ps[ox]]) * invW[ox] * invH
		out[ox] = v
		h[0][uint8(v+0.5)]++
	}
}

func (s *scaler) mergeHist(hist *[256]int32) {
	for v := range hist {
		hist[v] = s.hists[0][v] + s.hists[1][v] + s.hists[2][v] + s.hists[3][v]
	}
	s.hists = [4][256]int32{}
}

// runNarrow is run for less than 2× horizontal reduction, one pixel at a time.
func (s *scaler) runNarrow(src []byte, stride int, dst []float32, hist *[256]int32) {
	w := s.w
	cum := s.cum[:w+1]
	col := cum[1:]
	for oy := 0; oy < s.sh; oy++ {
		y0, y1 := s.ys[oy], s.ys[oy+1]
		clear(col)
		for y := y0; y < y1; y++ {
			for x, v := range src[y*stride : y*stride+w] {
				col[x] += uint32(v)
			}
		}
		var run uint32
		for x, c := range col {
			run += c
			col[x] = run
		}
		s.output(dst[oy*s.sw:(oy+1)*s.sw], 1/float32(y1-y0))
	}
	s.mergeHist(hist)
}
