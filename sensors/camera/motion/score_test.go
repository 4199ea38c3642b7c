package motion

import (
	"image"
	"testing"
)

func TestScoreMatchesOneToOne(t *testing.T) {
	var s Score
	truth := []image.Rectangle{image.Rect(0, 0, 10, 10), image.Rect(50, 50, 60, 70)}
	got := []image.Rectangle{
		image.Rect(1, 1, 11, 11),    // matches the first (IoU 0.68)
		image.Rect(0, 0, 12, 12),    // would match it too, but it is taken
		image.Rect(100, 0, 120, 20), // nothing there
	}
	s.Add(got, truth, 0.3)
	if s.TP != 1 || s.FP != 2 || s.FN != 1 {
		t.Fatalf("got %+v, want TP 1 FP 2 FN 1", s)
	}
	if p, r := s.Precision(), s.Recall(); p != 1.0/3 || r != 0.5 {
		t.Fatalf("precision %v recall %v", p, r)
	}
	s.Add(nil, nil, 0.3)
	if s.TP != 1 || s.FP != 2 || s.FN != 1 {
		t.Fatalf("an empty frame changed the score: %+v", s)
	}
}

func TestIoUAndUnionArea(t *testing.T) {
	a, b := image.Rect(0, 0, 10, 10), image.Rect(5, 0, 15, 10)
	if v := IoU(a, b); v != 50.0/150 {
		t.Fatalf("IoU %v, want 1/3", v)
	}
	if v := IoU(a, image.Rect(20, 20, 30, 30)); v != 0 {
		t.Fatalf("disjoint IoU %v", v)
	}
	if n := UnionArea([]image.Rectangle{a, b, image.Rect(0, 0, 2, 2), image.Rect(100, 100, 101, 103)}); n != 150+3 {
		t.Fatalf("union area %d, want 153", n)
	}
	if n := UnionArea(nil); n != 0 {
		t.Fatalf("union of nothing: %d", n)
	}
}
