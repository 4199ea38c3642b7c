package motion

import (
	"image"
	"math/rand/v2"
	"slices"
	"testing"
)

// floodRegions is the obvious 8-connected flood fill, as the reference
// for the run-based labeller.
func floodRegions(bin []uint8, w, h, minArea int) (boxes []image.Rectangle, counted int) {
	seen := make([]bool, len(bin))
	for start := range bin {
		if bin[start] == 0 || seen[start] {
			continue
		}
		seen[start] = true
		stack := []int{start}
		r := image.Rect(start%w, start/w, start%w+1, start/w+1)
		area := 0
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			area++
			r = r.Union(image.Rect(p%w, p/w, p%w+1, p/w+1))
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					x, y := p%w+dx, p/w+dy
					if x < 0 || y < 0 || x >= w || y >= h {
						continue
					}
					if q := y*w + x; bin[q] != 0 && !seen[q] {
						seen[q] = true
						stack = append(stack, q)
					}
				}
			}
		}
		if area >= minArea {
			boxes = append(boxes, r)
			counted += area
		}
	}
	return boxes, counted
}

func TestLabellerMatchesFloodFill(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		w, h := 1+rnd.IntN(40), 1+rnd.IntN(30)
		density := rnd.Float64()
		bin := make([]uint8, w*h)
		for i := range bin {
			if rnd.Float64() < density {
				bin[i] = 1
			}
		}
		orig := slices.Clone(bin)
		minArea := 1 + rnd.IntN(6)
		var l labeller
		l.init(w, h)
		var got []image.Rectangle
		n := l.label(bin, w, h, minArea, func(x0, y0, x1, y1 int) { got = append(got, image.Rect(x0, y0, x1, y1)) })
		want, wn := floodRegions(bin, w, h, minArea)
		cmp := func(a, b image.Rectangle) int {
			if c := a.Min.Y - b.Min.Y; c != 0 {
				return c
			}
			if c := a.Min.X - b.Min.X; c != 0 {
				return c
			}
			if c := a.Max.Y - b.Max.Y; c != 0 {
				return c
			}
			return a.Max.X - b.Max.X
		}
		slices.SortFunc(got, cmp)
		slices.SortFunc(want, cmp)
		if n != wn || !slices.Equal(got, want) {
			t.Fatalf("trial %d (%dx%d, min %d): got %d px %v, want %d px %v", trial, w, h, minArea, n, got, wn, want)
		}
		if !slices.Equal(bin, orig) {
			t.Fatalf("trial %d: label modified its input", trial)
		}
	}
}

// TestLabellerGrowsToItsBound reuses one labeller over frames of rising
// and falling density, up to the most runs an image can have (every other
// pixel set): the runs grow on demand, never past the bound, the regions
// still match the flood fill, and a frame that fits allocates nothing.
func TestLabellerGrowsToItsBound(t *testing.T) {
	const w, h = 41, 30
	var l labeller
	l.init(w, h)
	if cap(l.spans) != 0 {
		t.Fatalf("init allocated %d runs before any frame", cap(l.spans))
	}
	rnd := rand.New(rand.NewPCG(3, 4))
	frame := func(density float64) []uint8 {
		bin := make([]uint8, w*h)
		for i := range bin {
			if rnd.Float64() < density {
				bin[i] = 1
			}
		}
		return bin
	}
	worst := make([]uint8, w*h)
	for i := range worst {
		worst[i] = uint8(1 - i%w%2) // runs of one pixel at x = 0, 2, …, 40
	}
	for i, bin := range [][]uint8{frame(0.05), frame(0.5), worst, frame(0.2), frame(0)} {
		n := l.label(bin, w, h, 1, func(int, int, int, int) {})
		if _, want := floodRegions(bin, w, h, 1); n != want {
			t.Fatalf("frame %d: %d px counted, want %d", i, n, want)
		}
		if cap(l.spans) > l.limit {
			t.Fatalf("frame %d: %d runs held, over the bound %d", i, cap(l.spans), l.limit)
		}
		if want := (w + 1) / 2 * h; i == 2 && len(l.spans) != want {
			t.Fatalf("worst frame: %d runs, want %d", len(l.spans), want)
		}
	}
	sparse := frame(0.3)
	if a := testing.AllocsPerRun(10, func() { l.label(sparse, w, h, 1, func(int, int, int, int) {}) }); a != 0 {
		t.Fatalf("%.1f allocs for a frame that fits, want 0", a)
	}
}

func TestDilateMatchesDefinition(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	for range 200 {
		w, h := 1+rnd.IntN(40), 1+rnd.IntN(12)
		bin := make([]uint8, w*h)
		for i := range bin {
			if rnd.IntN(6) == 0 {
				bin[i] = 1
			}
		}
		want := make([]uint8, w*h)
		for y := range h {
			for x := range w {
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						if xx, yy := x+dx, y+dy; xx >= 0 && yy >= 0 && xx < w && yy < h {
							want[y*w+x] |= bin[yy*w+xx]
						}
					}
				}
			}
		}
		dilate3(bin, make([]uint8, w*h), w, h)
		if !slices.Equal(bin, want) {
			t.Fatalf("%dx%d: got %v, want %v", w, h, bin, want)
		}
	}
}
