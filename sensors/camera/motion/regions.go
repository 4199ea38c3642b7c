package motion

import (
	"bytes"
	"image"
)

// span is a run of changed pixels on one row, x0..x1-1, and its link in a
// union-find forest of the runs that touch.
type span struct {
	y, x0, x1 int32
	parent    int32
	// filled in on roots: the region's pixel count and bounding box
	area               int32
	bx0, by0, bx1, by1 int32
}

// labeller finds the 8-connected regions of a binary image from its runs:
// a flood fill visits pixels one by one with a division per neighbour,
// while a moving person is a few dozen runs.
type labeller struct {
	spans []span
	limit int // the most runs a w×h image can have
}

func (l *labeller) init(w, h int) {
	// At most one run per two pixels, plus one per row. The runs grow
	// towards that bound as frames need them: a moving person is a few
	// dozen runs, while the bound is 0.24 MB at 320×240.
	l.spans, l.limit = nil, w*h/2+h
}

// grow doubles the runs' backing array (capped at limit) by hand, as
// append's own growth could overshoot the bound. Once a frame has needed
// n runs, frames with up to n runs allocate nothing.
func (l *labeller) grow(spans []span) []span {
	ns := make([]span, len(spans), min(max(2*cap(spans), 64), l.limit))
	copy(ns, spans)
	return ns
}

func (l *labeller) find(i int32) int32 {
	s := l.spans
	for s[i].parent != i {
		s[i].parent = s[s[i].parent].parent // path halving
		i = s[i].parent
	}
	return i
}

func (l *labeller) union(a, b int32) {
	a, b = l.find(a), l.find(b)
	if a == b {
		return
	}
	// the earlier run is the root, so that regions come out in raster
	// order of their first pixel
	if b < a {
		a, b = b, a
	}
	l.spans[b].parent = a
}

// label collects the regions of bin (w×h, 0 or 1) of at least minArea
// pixels. For each, in raster order of its first pixel, it calls box with
// the bounding box in bin's pixels (max exclusive); it returns the total
// pixel count of those regions. bin is not modified.
func (l *labeller) label(bin []uint8, w, h, minArea int, box func(x0, y0, x1, y1 int)) int {
	spans := l.spans[:0]
	prev0, prev1 := 0, 0 // the previous row's runs: spans[prev0:prev1]
	for y := range h {
		row := bin[y*w : (y+1)*w]
		cur0 := len(spans)
		for x := 0; x < w; {
			i := bytes.IndexByte(row[x:], 1)
			if i < 0 {
				break
			}
			x0 := x + i
			j := bytes.IndexByte(row[x0:], 0)
			x1 := w
			if j >= 0 {
				x1 = x0 + j
			}
			n := int32(len(spans))
			if len(spans) == cap(spans) {
				spans = l.grow(spans)
			}
			spans = append(spans, span{y: int32(y), x0: int32(x0), x1: int32(x1), parent: n})
			x = x1
		}
		l.spans = spans
		// Join the runs that touch one of the previous row's, diagonals
		// included: [a0,a1) and [b0,b1) touch when a0 ≤ b1 and b0 ≤ a1.
		p := prev0
		for c := cur0; c < len(spans); c++ {
			for p < prev1 && spans[p].x1 < spans[c].x0 {
				p++
			}
			for q := p; q < prev1 && spans[q].x0 <= spans[c].x1; q++ {
				l.union(int32(c), int32(q))
			}
		}
		prev0, prev1 = cur0, len(spans)
	}
	for i := range spans {
		s := &spans[i]
		r := &spans[l.find(int32(i))]
		if r == s {
			s.area, s.bx0, s.by0, s.bx1, s.by1 = 0, s.x0, s.y, s.x1, s.y+1
		}
		r.area += s.x1 - s.x0
		r.bx0, r.bx1 = min(r.bx0, s.x0), max(r.bx1, s.x1)
		r.by1 = max(r.by1, s.y+1)
	}
	counted := 0
	for i := range spans {
		s := &spans[i]
		if s.parent != int32(i) || int(s.area) < minArea {
			continue
		}
		counted += int(s.area)
		box(int(s.bx0), int(s.by0), int(s.bx1), int(s.by1))
	}
	return counted
}

// appendBox is label's callback for a Detector: the box scaled back to
// input coordinates, covering every input pixel that contributed to the
// region's downscaled pixels.
func (d *Detector) appendBox(x0, y0, x1, y1 int) {
	d.boxes = append(d.boxes, image.Rect(d.sc.xs[x0], d.sc.ys[y0], d.sc.xs[x1], d.sc.ys[y1]))
}
