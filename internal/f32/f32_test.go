package f32

import (
	"math"
	"math/rand/v2"
	"testing"
)

// naive is Conv written as its definition, in float64.
func naive(m, n, taps, k int, a []float32, lda, tap int, b, bias []float32) []float64 {
	out := make([]float64, m*n)
	for i := range m {
		for j := range n {
			s := float64(bias[j])
			for t := range taps {
				for q := range k {
					s += float64(a[i*lda+t*tap+q]) * float64(b[(t*k+q)*n+j])
				}
			}
			out[i*n+j] = s
		}
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// shape is one Conv call's dimensions.
type shape struct{ m, n, taps, k, lda, tap int }

// operands draws a, b and bias for s.
func (s shape) operands(r *rand.Rand) (a, b, bias []float32) {
	return randSlice(r, (s.m-1)*s.lda+(s.taps-1)*s.tap+s.k), randSlice(r, s.taps*s.k*s.n), randSlice(r, s.n)
}

// conv runs Conv with s's dimensions.
func (s shape) conv(a, b, bias, c []float32, ldc int) {
	Conv(s.m, s.n, s.taps, s.k, a, s.lda, s.tap, b, bias, c, ldc)
}

// shapes covers the embedding network's: 1×3 and 3×1 taps, n of 24…96,
// row counts that leave every remainder of the row blocking.
var shapes = []shape{
	{1, 8, 1, 1, 1, 0}, {3, 24, 3, 3, 1, 34}, {7, 24, 1, 72, 24, 0}, {13, 48, 3, 48, 48, 18 * 48},
	{34, 72, 1, 216, 72, 0}, {9, 96, 3, 96, 96, 6 * 96}, {5, 16, 2, 5, 5, 7}, {6, 20, 1, 3, 3, 0},
}

func TestConvMatchesDefinition(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, s := range shapes {
		a, b, bias := s.operands(r)
		ldc := s.n + 3
		c := make([]float32, (s.m-1)*ldc+s.n)
		s.conv(a, b, bias, c, ldc)
		want := naive(s.m, s.n, s.taps, s.k, a, s.lda, s.tap, b, bias)
		for i := range s.m {
			for j := range s.n {
				got, w := float64(c[i*ldc+j]), want[i*s.n+j]
				if math.Abs(got-w) > 1e-5*(1+math.Sqrt(float64(s.taps*s.k))) {
					t.Fatalf("%+v: c[%d][%d] = %v, want %v", s, i, j, got, w)
				}
			}
		}
	}
}

// A row's result does not depend on how many rows come with it: what lets
// a stream compute rows a few at a time and match a batch bit for bit.
func TestConvRowsIndependentOfBlocking(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	s := shape{11, 48, 3, 48, 48, 13 * 48}
	m, n := s.m, s.n
	a, b, bias := s.operands(r)
	all := make([]float32, m*n)
	s.conv(a, b, bias, all, n)
	row := s
	row.m = 1
	for i := range m {
		one := make([]float32, n)
		row.conv(a[i*s.lda:], b, bias, one, n)
		for j := range n {
			if one[j] != all[i*n+j] {
				t.Fatalf("row %d alone differs at %d", i, j)
			}
		}
	}
}

func TestConvPanicsOnShortSlices(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	Conv(2, 8, 1, 4, make([]float32, 4), 4, 0, make([]float32, 32), make([]float32, 8), make([]float32, 16), 8)
}

// The assembly kernel and the portable one agree to rounding on every
// shape; where the CPU has no assembly kernel both runs are the portable one.
func TestAsmMatchesGeneric(t *testing.T) {
	t.Logf("kernel: %s", Kernel())
	r := rand.New(rand.NewPCG(5, 6))
	for _, s := range append(shapes, shape{37, 96, 3, 96, 96, 40 * 96}) {
		a, b, bias := s.operands(r)
		fast := make([]float32, s.m*s.n)
		slow := make([]float32, s.m*s.n)
		s.conv(a, b, bias, fast, s.n)
		SetGeneric(true)
		s.conv(a, b, bias, slow, s.n)
		SetGeneric(false)
		for i := range fast {
			if d := math.Abs(float64(fast[i] - slow[i])); d > 1e-5*(1+math.Abs(float64(slow[i]))+math.Sqrt(float64(s.taps*s.k))) {
				t.Fatalf("%+v: element %d: %v (%s) vs %v (go)", s, i, fast[i], Kernel(), slow[i])
			}
		}
	}
}

// BenchmarkConv is the kernel on the embedding network's largest
// convolution per hop (3×1, 72→72 channels, 4 rows of 10), both kernels.
func BenchmarkConv(b *testing.B) {
	r := rand.New(rand.NewPCG(7, 8))
	s := shape{40, 72, 3, 72, 72, 10 * 72}
	a, w, bias := s.operands(r)
	c := make([]float32, s.m*s.n)
	for _, gen := range []bool{true, false} {
		SetGeneric(gen)
		b.Run(Kernel(), func(b *testing.B) {
			for range b.N {
				s.conv(a, w, bias, c, s.n)
			}
			b.ReportMetric(float64(s.m*s.n*s.taps*s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
	SetGeneric(false)
}
