package f32

// Dot is the dot product of w and x[:len(w)], unrolled by four. The
// wake-word head and its trainer share it: the head's first layer is a dot
// product per unit over a window of 1,536 values, most of its cost.
func Dot(w, x []float32) float32 {
	x = x[:len(w)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(w); i += 4 {
		s0 += w[i] * x[i]
		s1 += w[i+1] * x[i+1]
		s2 += w[i+2] * x[i+2]
		s3 += w[i+3] * x[i+3]
	}
	for ; i < len(w); i++ {
		s0 += w[i] * x[i]
	}
	return s0 + s1 + s2 + s3
}
