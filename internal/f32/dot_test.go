package f32

import "testing"

func TestDot(t *testing.T) {
	w := []float32{1, 2, 3, 4, 5, 6, 7}
	x := []float32{7, 6, 5, 4, 3, 2, 1, 100}
	if got := Dot(w, x); got != 84 {
		t.Errorf("Dot = %v, want 84", got)
	}
	if got := Dot(nil, x); got != 0 {
		t.Errorf("empty Dot = %v", got)
	}
}
