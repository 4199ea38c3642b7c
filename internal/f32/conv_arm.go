//go:build !purego

package f32

import "golang.org/x/sys/cpu"

// hasAsm: the 32-bit arm kernel needs NEON and VFPv4 (its fused
// multiply-add); GOARM=7 promises neither, so it is checked.
var hasAsm = cpu.ARM.HasNEON && cpu.ARM.HasVFPv4

func init() {
	if hasAsm {
		kernel = "neon32"
	}
}

// Eight columns per strip: NEON on 32-bit arm has 16 quad registers, enough
// for 4 rows × 8 columns of sums beside the weights and the broadcast.

//go:noescape
func conv4x8(m4, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)

//go:noescape
func conv1x8(m, taps, k int, a *float32, lda, tap int, b *float32, nb int, bias *float32, c *float32, ldc int)

func conv(m, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	if !hasAsm || generic.Load() || n%8 != 0 {
		convGeneric(m, n, taps, k, a, lda, tap, b, bias, c, ldc)
		return
	}
	m4 := m / 4
	for j := 0; j < n; j += 8 {
		if m4 > 0 {
			conv4x8(m4, taps, k, &a[0], lda, tap, &b[j], n, &bias[j], &c[j], ldc)
		}
		if r := m - 4*m4; r > 0 {
			conv1x8(r, taps, k, &a[4*m4*lda], lda, tap, &b[j], n, &bias[j], &c[4*m4*ldc+j], ldc)
		}
	}
}
