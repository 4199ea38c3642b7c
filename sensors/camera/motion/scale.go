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
// pixels so that a pair never straddles two outputs.
type scaler struct {
	w, h, sw, sh int
	xs, ys       []int     // span boundaries: output x covers input xs[x]..xs[x+1]
	invW         []float32 // 1 / span width, per output column
	pairs        []uint32  // per input pixel pair: sum over the current row span
	// narrow: less than 2× horizontal reduction, where pair-aligned spans
	// would not fit; sums per pixel instead, in pairs[:w].
	narrow bool
}

func (s *scaler) init(w, h, sw, sh int) error {
	if sw > w || sh > h || sw < 1 || sh < 1 {
		return fmt.Errorf("motion: cannot downscale %dx%d to %dx%d", w, h, sw, sh)
	}
	s.w, s.h, s.sw, s.sh = w, h, sw, sh
	s.narrow = sw > w/2
	s.xs, s.ys = make([]int, sw+1), make([]int, sh+1)
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
	s.invW = make([]float32, sw)
	for x := range s.invW {
		s.invW[x] = 1 / float32(s.xs[x+1]-s.xs[x])
	}
	s.pairs = make([]uint32, w)
	return nil
}

const lanes = 0x00FF00FF00FF00FF

// run downscales src into dst (sw×sh) and fills hist with the histogram of
// dst's values rounded to integers.
func (s *scaler) run(src []byte, stride int, dst []float32, hist *[256]int32) {
	*hist = [256]int32{}
	if s.narrow {
		s.runNarrow(src, stride, dst, hist)
		return
	}
	w := s.w
	words := w / 8
	pairs := s.pairs
	for oy := 0; oy < s.sh; oy++ {
		y0, y1 := s.ys[oy], s.ys[oy+1]
		clear(pairs[4*words:])
		// rows y0..y1-1, without the bytes after the last row's end
		rows := src[y0*stride : (y1-1)*stride+w]
		span := y1 - y0
		k := 0
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
				q := pairs[4*k : 4*k+16 : 4*k+16]
				q[0], q[1], q[2], q[3] = uint32(a&0xFFFF), uint32(a>>16&0xFFFF), uint32(a>>32&0xFFFF), uint32(a>>48)
				q[4], q[5], q[6], q[7] = uint32(b&0xFFFF), uint32(b>>16&0xFFFF), uint32(b>>32&0xFFFF), uint32(b>>48)
				q[8], q[9], q[10], q[11] = uint32(c&0xFFFF), uint32(c>>16&0xFFFF), uint32(c>>32&0xFFFF), uint32(c>>48)
				q[12], q[13], q[14], q[15] = uint32(d&0xFFFF), uint32(d>>16&0xFFFF), uint32(d>>32&0xFFFF), uint32(d>>48)
			}
		}
		// The rest (and spans over 128 rows) two words at a time.
		for ; k+2 <= words; k += 2 {
			var a0, a1, b0, b1, c0, c1, d0, d1 uint32
			for y := 0; y < span; {
				end := min(span, y+128) // a lane holds 128 rows of pixel pairs (128·510 < 65536)
				var acc, bcc uint64
				for off := y*stride + 8*k; y < end; y, off = y+1, off+stride {
					r := rows[off : off+16 : off+16]
					v := binary.LittleEndian.Uint64(r)
					u := binary.LittleEndian.Uint64(r[8:])
					acc += v&lanes + (v>>8)&lanes
					bcc += u&lanes + (u>>8)&lanes
				}
				a0 += uint32(acc & 0xFFFF)
				a1 += uint32(acc >> 16 & 0xFFFF)
				b0 += uint32(acc >> 32 & 0xFFFF)
				b1 += uint32(acc >> 48)
				c0 += uint32(bcc & 0xFFFF)
				c1 += uint32(bcc >> 16 & 0xFFFF)
				d0 += uint32(bcc >> 32 & 0xFFFF)
				d1 += uint32(bcc >> 48)
			}
			q := pairs[4*k : 4*k+8 : 4*k+8]
			q[0], q[1], q[2], q[3] = a0, a1, b0, b1
			q[4], q[5], q[6], q[7] = c0, c1, d0, d1
		}
		for ; k < words; k++ {
			var p0, p1, p2, p3 uint32
			for y := 0; y < span; {
				end := min(span, y+128)
				var acc uint64
				for off := y*stride + 8*k; y < end; y, off = y+1, off+stride {
					v := binary.LittleEndian.Uint64(rows[off : off+8 : off+8])
					acc += v&lanes + (v>>8)&lanes
				}
				p0 += uint32(acc & 0xFFFF)
				p1 += uint32(acc >> 16 & 0xFFFF)
				p2 += uint32(acc >> 32 & 0xFFFF)
				p3 += uint32(acc >> 48)
			}
			q := pairs[4*k : 4*k+4 : 4*k+4]
			q[0], q[1], q[2], q[3] = p0, p1, p2, p3
		}
		for y := y0; y < y1; y++ {
			row := src[y*stride : y*stride+w]
			for x := 8 * words; x < w; x++ {
				pairs[x/2] += uint32(row[x])
			}
		}
		invH := 1 / float32(y1-y0)
		out := dst[oy*s.sw : (oy+1)*s.sw]
		xs := s.xs[:len(out)+1]
		invW := s.invW[:len(out)]
		for ox := range out {
			var sum uint32
			for _, c := range pairs[xs[ox]/2 : (xs[ox+1]+1)/2] {
				sum += c
			}
			v := float32(sum) * invW[ox] * invH
			out[ox] = v
			hist[uint8(v+0.5)]++
		}
	}
}

// runNarrow is run for less than 2× horizontal reduction, one pixel at a time.
func (s *scaler) runNarrow(src []byte, stride int, dst []float32, hist *[256]int32) {
	w := s.w
	col := s.pairs[:w]
	for oy := 0; oy < s.sh; oy++ {
		y0, y1 := s.ys[oy], s.ys[oy+1]
		clear(col)
		for y := y0; y < y1; y++ {
			for x, v := range src[y*stride : y*stride+w] {
				col[x] += uint32(v)
			}
		}
		invH := 1 / float32(y1-y0)
		out := dst[oy*s.sw : (oy+1)*s.sw]
		for ox := range out {
			var sum uint32
			for _, c := range col[s.xs[ox]:s.xs[ox+1]] {
				sum += c
			}
			v := float32(sum) * s.invW[ox] * invH
			out[ox] = v
			hist[uint8(v+0.5)]++
		}
	}
}
