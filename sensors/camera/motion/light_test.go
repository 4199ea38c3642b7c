package motion

import (
	"math"
	"math/rand/v2"
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
		cur, bg, out := make([]float32, sw), make([]float32, sw), make([]float32, sw)
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
