package vision

import (
	"image"
	"testing"
)

func TestMotionRegion(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		data map[string]any
		want *image.Rectangle
	}{
		{map[string]any{"boxes": [][4]int{{60, 40, 100, 80}}, "width": 160, "height": 120}, &image.Rectangle{image.Pt(250, 166), image.Pt(750, 833)}},
		// The JSON form of a replayed stream; two boxes make one region.
		{map[string]any{"boxes": []any{[]any{0.0, 0.0, 10.0, 10.0}, []any{20.0, 20.0, 30.0, 30.0}}, "width": 100.0, "height": 100.0},
			&image.Rectangle{image.Pt(0, 0), image.Pt(450, 450)}},
		{map[string]any{"boxes": [][4]int{{0, 0, 150, 110}}, "width": 160, "height": 120}, nil}, // most of the frame
		{map[string]any{"boxes": [][4]int{}, "width": 160, "height": 120}, nil},
		{map[string]any{"boxes": "garbage", "width": 160}, nil},
		{nil, nil},
	} {
		got := motionRegion(c.data)
		if (got == nil) != (c.want == nil) || (got != nil && *got != *c.want) {
			t.Errorf("%v: %v, want %v", c.data, got, c.want)
		}
	}
}
