// Package f32 holds the float32 kernel the speech embedding's convolutions
// spend their time in. Conv is a small GEMM whose A rows are read through
// "taps" (shifted views of one activation buffer), so a 1×3 or 3×1
// convolution over a channels-last buffer needs no im2col copy.
//
// Each output element is computed by the same sequence of operations
// whatever m is and wherever the row falls in a block, so a caller that
// computes rows in different batches (a stream) gets bit-identical results.
// The assembly kernels (amd64 AVX2+FMA, arm64 NEON) fuse multiply and add;
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

// convGeneric is the portable kernel: four rows at a time, so each weight
// row loaded serves four outputs.
func convGeneric(m, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	i := 0
	for ; i+4 <= m; i += 4 {
		c0 := c[i*ldc : i*ldc+n]
		c1 := c[(i+1)*ldc : (i+1)*ldc+n]
		c2 := c[(i+2)*ldc : (i+2)*ldc+n]
		c3 := c[(i+3)*ldc : (i+3)*ldc+n]
		copy(c0, bias[:n])
		copy(c1, bias[:n])
		copy(c2, bias[:n])
		copy(c3, bias[:n])
		for t := range taps {
			for q := range k {
				off := i*lda + t*tap + q
				a0, a1, a2, a3 := a[off], a[off+lda], a[off+2*lda], a[off+3*lda]
				row := b[(t*k+q)*n : (t*k+q+1)*n]
				for j, w := range row {
					c0[j] += a0 * w
					c1[j] += a1 * w
					c2[j] += a2 * w
					c3[j] += a3 * w
				}
			}
		}
	}
	for ; i < m; i++ {
		c0 := c[i*ldc : i*ldc+n]
		copy(c0, bias[:n])
		for t := range taps {
			for q := range k {
				a0 := a[i*lda+t*tap+q]
				row := b[(t*k+q)*n : (t*k+q+1)*n]
				for j, w := range row {
					c0[j] += a0 * w
				}
			}
		}
	}
}
