// Package f32 holds the float32 kernels: the one the speech embedding's
// convolutions spend their time in, and the dot product of the wake-word
// head's dense layers. Conv is a small GEMM whose A rows are read through
// "taps" (shifted views of one activation buffer), so a 1×3 or 3×1
// convolution over a channels-last buffer needs no im2col copy.
//
// Each output element is computed by the same sequence of operations
// whatever m is and wherever the row falls in a block, so a caller that
// computes rows in different batches (a stream) gets bit-identical results.
// The assembly kernels (amd64 AVX2+FMA, arm64 NEON, 32-bit arm NEON with
// VFPv4) fuse multiply and add;
// the portable one may not, so results differ between the two by rounding
// only.
package f32

// Conv sets, for i < m and j < n,
//
//	c[i*ldc+j] = bias[j] + Σ_{t<taps} Σ_{q<k} a[i*lda+t*tap+q] · b[(t*k+q)*n+j]
//
// accumulating in the order of t, then q. b is the weight matrix, taps·k
// rows of n. It panics if a slice is too short.
func Conv(m, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	if m <= 0 {
		return
	}
	checkConv(m, n, taps, k, a, lda, tap, b, bias, c, ldc)
	conv(m, n, taps, k, a, lda, tap, b, bias, c, ldc)
}

func checkConv(m, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	if n <= 0 || taps <= 0 || k <= 0 || lda < 0 || tap < 0 || ldc < n {
		panic("f32: bad Conv dimensions")
	}
	if len(a) < (m-1)*lda+(taps-1)*tap+k || len(b) < taps*k*n || len(bias) < n || len(c) < (m-1)*ldc+n {
		panic("f32: Conv slice too short")
	}
}

// convGeneric is the portable kernel: tiles of 2 rows × 4 columns whose
// eight sums stay in registers over the whole of taps·k, so each a and b
// value loaded serves two or four products and c is written once. Leftover
// rows and columns take the same per-element sequence.
func convGeneric(m, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	j := 0
	for ; j+4 <= n; j += 4 {
		i := 0
		for ; i+2 <= m; i += 2 {
			tile2x4(i, j, n, taps, k, a, lda, tap, b, bias, c, ldc)
		}
		if i < m {
			tile1x4(i, j, n, taps, k, a, lda, tap, b, bias, c, ldc)
		}
	}
	for ; j < n; j++ {
		for i := range m {
			s := bias[j]
			for t := range taps {
				ar := a[i*lda+t*tap : i*lda+t*tap+k]
				for q, av := range ar {
					s += av * b[(t*k+q)*n+j]
				}
			}
			c[i*ldc+j] = s
		}
	}
}

func tile2x4(i, j, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	s00, s01, s02, s03 := bias[j], bias[j+1], bias[j+2], bias[j+3]
	s10, s11, s12, s13 := s00, s01, s02, s03
	for t := range taps {
		a0 := a[i*lda+t*tap : i*lda+t*tap+k]
		a1 := a[(i+1)*lda+t*tap : (i+1)*lda+t*tap+k]
		bt := b[t*k*n : (t+1)*k*n]
		for q, x0 := range a0 {
			x1 := a1[q]
			br := bt[q*n+j : q*n+j+4]
			b0, b1, b2, b3 := br[0], br[1], br[2], br[3]
			s00 += x0 * b0
			s01 += x0 * b1
			s02 += x0 * b2
			s03 += x0 * b3
			s10 += x1 * b0
			s11 += x1 * b1
			s12 += x1 * b2
			s13 += x1 * b3
		}
	}
	c0 := c[i*ldc+j : i*ldc+j+4]
	c0[0], c0[1], c0[2], c0[3] = s00, s01, s02, s03
	c1 := c[(i+1)*ldc+j : (i+1)*ldc+j+4]
	c1[0], c1[1], c1[2], c1[3] = s10, s11, s12, s13
}

func tile1x4(i, j, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	s0, s1, s2, s3 := bias[j], bias[j+1], bias[j+2], bias[j+3]
	for t := range taps {
		a0 := a[i*lda+t*tap : i*lda+t*tap+k]
		bt := b[t*k*n : (t+1)*k*n]
		for q, x := range a0 {
			br := bt[q*n+j : q*n+j+4]
			s0 += x * br[0]
			s1 += x * br[1]
			s2 += x * br[2]
			s3 += x * br[3]
		}
	}
	c0 := c[i*ldc+j : i*ldc+j+4]
	c0[0], c0[1], c0[2], c0[3] = s0, s1, s2, s3
}
