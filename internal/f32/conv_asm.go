//go:build (amd64 || arm64) && !purego

package f32

// The assembly kernels work on strips of 24 columns (the network's channel
// counts are 24, 48, 72 and 96): conv4x24 four rows at a time, conv1x24
// one. Both compute each element as the same chain of fused multiply-adds.

//go:noescape
func conv4x24(m4, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)

//go:noescape
func conv1x24(m, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)

const strip = 24

func conv(m, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	if !hasAsm || generic.Load() || n%strip != 0 {
		convGeneric(m, n, taps, k, a, lda, tap, b, bias, c, ldc)
		return
	}
	m4 := m / 4
	for j := 0; j < n; j += strip {
		if m4 > 0 {
			conv4x24(m4, taps, k, &a[0], lda, tap, &b[j], n, &bias[j], &c[j], ldc)
		}
		if r := m - 4*m4; r > 0 {
			conv1x24(r, taps, k, &a[4*m4*lda], lda, tap, &b[j], n, &bias[j], &c[4*m4*ldc+j], ldc)
		}
	}
}
