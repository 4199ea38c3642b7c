package motion

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// diffRow steps the lighting map along the row; it must equal the map
// interpolated pixel by pixel (row), for any frame and tile sizes.
func TestDiffRowMatchesInterpolation(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][2]int{{133, 100}, {178, 100}, {16, 16}, {20, 9}, {47, 31}, {5, 3}} {
		sw, sh := sz[0], sz[1]
		var l lighting
		l.init(sw, sh, make([]uint8, sw*sh))
		for i := range l.o {
			l.o[i], l.ig[i] = float32(rnd.NormFloat64()*10), float32(0.8+0.4*rnd.Float64())
		}
		// eight values of slack, as diffRow wants
		cur, bg, out := make([]float32, sw, sw+8), make([]float32, sw, sw+8), make([]float32, sw, sw+8)
		o, ig := make([]float32, sw), make([]float32, sw)
		for y := range sh {
			for x := range cur {
				cur[x], bg[x] = float32(rnd.IntN(256)), float32(rnd.IntN(256))
			}
			l.diffRow(y, cur, bg, out, 10, 240)
			l.row(y, o, ig)
			for x := range out {
				want := cur[x] - float32(math.Min(math.Max(float64((bg[x]-o[x])*ig[x]), 10), 240))
				if d := math.Abs(float64(out[x] - want)); d > 1e-3 {
					t.Fatalf("%dx%d row %d col %d: %v, want %v", sw, sh, y, x, out[x], want)
				}
			}
		}
	}
}

// The vector blur-and-threshold, where there is one, gives what the Go one
// does (up to rounding right at the threshold, should the compiler fuse
// multiply-adds).
func TestVblurThresholdVectorMatchesGo(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 8))
	for _, w := range []int{1, 7, 8, 9, 133, 178, 1000} {
		rows := make([][]float32, 5)
		for i := range rows {
			rows[i] = make([]float32, w)
			for x := range rows[i] {
				rows[i][x] = float32(rnd.NormFloat64() * 40)
			}
		}
		a, b := make([]uint8, w), make([]uint8, w)
		na := vblurThreshold(rows[0], rows[1], rows[2], rows[3], rows[4], a, 30)
		nb := vblurThresholdGo(rows[0], rows[1], rows[2], rows[3], rows[4], b, 30)
		for x := range a {
			if a[x] != b[x] {
				e := k0*(rows[0][x]+rows[4][x]) + k1*(rows[1][x]+rows[3][x]) + k2*rows[2][x]
				if math.Abs(math.Abs(float64(e))-30) > 1e-3 {
					t.Fatalf("w %d x %d: %d, want %d (e %v)", w, x, a[x], b[x], e)
				}
			}
		}
		ones := func(o []uint8) (n int) {
			for _, v := range o {
				n += int(v)
			}
			return n
		}
		if na != ones(a) || nb != ones(b) {
			t.Fatalf("w %d: counts %d and %d, of %d and %d ones", w, na, nb, ones(a), ones(b))
		}
	}
}

// The vector difference and horizontal blur, where there are, give what
// the Go loops do (up to rounding, should the compiler fuse multiply-adds).
func TestVectorDiffAndBlurMatchGo(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	for _, sz := range [][2]int{{133, 100}, {178, 100}, {5, 3}, {16, 16}, {47, 9}} {
		sw, sh := sz[0], sz[1]
		var l lighting
		l.init(sw, sh, make([]uint8, sw*sh))
		for i := range l.o {
			l.o[i], l.ig[i] = float32(rnd.NormFloat64()*10), float32(0.8+0.4*rnd.Float64())
		}
		cur, bg := make([]float32, sw, sw+8), make([]float32, sw, sw+8)
		a, b := make([]float32, sw, sw+8), make([]float32, sw, sw+8)
		for y := range sh {
			for x := range cur {
				cur[x], bg[x] = float32(rnd.IntN(256)), float32(rnd.IntN(256))
			}
			l.diffRow(y, cur, bg, a, 10, 240)
			diffSegsGo(cur, bg, b, l.lin, 10, 240)
			for x := range a {
				if d := math.Abs(float64(a[x] - b[x])); d > 1e-3 {
					t.Fatalf("%dx%d row %d col %d: %v, want %v", sw, sh, y, x, a[x], b[x])
				}
			}
			ha, hb := make([]float32, sw), make([]float32, sw)
			hblur5(a, ha)
			for x := range hb {
				hb[x] = k0*(a[clampi(x-2, sw)]+a[clampi(x+2, sw)]) + k1*(a[clampi(x-1, sw)]+a[clampi(x+1, sw)]) + k2*a[x]
			}
			for x := range ha {
				if d := math.Abs(float64(ha[x] - hb[x])); d > 1e-3 {
					t.Fatalf("%dx%d row %d col %d: blur %v, want %v", sw, sh, y, x, ha[x], hb[x])
				}
			}
		}
	}
}

func TestVectorStretchAndBlendMatchGo(t *testing.T) {
	rnd := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 8, 13300, 13303} {
		x, bg := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], bg[i] = float32(rnd.IntN(256)), float32(rnd.IntN(256))
		}
		a, b := slices.Clone(x), slices.Clone(x)
		stretch(a, 17.5, 1.37)
		stretchGo(b, 17.5, 1.37)
		ga, gb := slices.Clone(bg), slices.Clone(bg)
		blend(ga, x, 0.01)
		blendGo(gb, x, 0.01)
		for i := range a {
			if math.Abs(float64(a[i]-b[i])) > 1e-3 || math.Abs(float64(ga[i]-gb[i])) > 1e-3 {
				t.Fatalf("n %d i %d: stretch %v / %v, blend %v / %v", n, i, a[i], b[i], ga[i], gb[i])
			}
		}
	}
}
