package motion

import (
	"image"
	"slices"
)

// Score counts how detected boxes match ground-truth boxes over frames,
// for tuning a detector on labelled footage (edgeagent motion --truth).
type Score struct {
	TP, FP, FN int // matched, detected but not true, true but not detected
}

// Merge adds o's counts, as when frames are scored one at a time.
func (s *Score) Merge(o Score) {
	s.TP += o.TP
	s.FP += o.FP
	s.FN += o.FN
}

// Add matches one frame's detections to its truth, one to one, best IoU
// first, counting a pair as a match when its IoU is at least minIoU.
func (s *Score) Add(got, truth []image.Rectangle, minIoU float64) {
	type pair struct {
		g, t int
		iou  float64
	}
	var pairs []pair
	for i, g := range got {
		for j, t := range truth {
			if v := IoU(g, t); v >= minIoU {
				pairs = append(pairs, pair{i, j, v})
			}
		}
	}
	slices.SortStableFunc(pairs, func(a, b pair) int {
		switch {
		case a.iou > b.iou:
			return -1
		case a.iou < b.iou:
			return 1
		}
		return 0
	})
	usedG, usedT := make([]bool, len(got)), make([]bool, len(truth))
	tp := 0
	for _, p := range pairs {
		if !usedG[p.g] && !usedT[p.t] {
			usedG[p.g], usedT[p.t] = true, true
			tp++
		}
	}
	s.TP += tp
	s.FP += len(got) - tp
	s.FN += len(truth) - tp
}

// Precision is the share of detected boxes that match a true one (1 when
// nothing was detected).
func (s Score) Precision() float64 {
	if s.TP+s.FP == 0 {
		return 1
	}
	return float64(s.TP) / float64(s.TP+s.FP)
}

// Recall is the share of true boxes that were detected (1 when there were
// none).
func (s Score) Recall() float64 {
	if s.TP+s.FN == 0 {
		return 1
	}
	return float64(s.TP) / float64(s.TP+s.FN)
}

// IoU is the intersection over union of two boxes (0 when both are empty).
func IoU(a, b image.Rectangle) float64 {
	i := a.Intersect(b)
	in := i.Dx() * i.Dy()
	u := a.Dx()*a.Dy() + b.Dx()*b.Dy() - in
	if u <= 0 {
		return 0
	}
	return float64(in) / float64(u)
}

// UnionArea is the number of pixels covered by at least one of the boxes.
func UnionArea(boxes []image.Rectangle) int {
	// Coordinate compression: boxes are few, so the grid of their edges
	// is small.
	var xs, ys []int
	for _, b := range boxes {
		if b.Empty() {
			continue
		}
		xs = append(xs, b.Min.X, b.Max.X)
		ys = append(ys, b.Min.Y, b.Max.Y)
	}
	slices.Sort(xs)
	slices.Sort(ys)
	xs, ys = slices.Compact(xs), slices.Compact(ys)
	area := 0
	for i := 0; i+1 < len(xs); i++ {
		for j := 0; j+1 < len(ys); j++ {
			c := image.Pt(xs[i], ys[j])
			for _, b := range boxes {
				if c.In(b) {
					area += (xs[i+1] - xs[i]) * (ys[j+1] - ys[j])
					break
				}
			}
		}
	}
	return area
}
