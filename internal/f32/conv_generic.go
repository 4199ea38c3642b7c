//go:build purego || (!amd64 && !arm64 && !arm)

package f32

func conv(m, n, taps, k int, a []float32, lda, tap int, b, bias, c []float32, ldc int) {
	convGeneric(m, n, taps, k, a, lda, tap, b, bias, c, ldc)
}
