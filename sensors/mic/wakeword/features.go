package wakeword

// Dims is the length of the feature vectors DTW compares: c1..c12.
//
// c0 (overall loudness) is left out, so that a phrase spoken louder or
// further from the microphone matches as well. Deltas were left out after
// measuring: on the benchmark corpus they did not separate the wake phrase
// from other speech any better, and they would double the matching work
// and delay every frame by two hops.
const Dims = numCeps - 1

// extractor turns 10 ms hops into feature vectors.
type extractor struct {
	mfcc *MFCC
	ceps [numCeps]float64
}

func newExtractor() *extractor { return &extractor{mfcc: NewMFCC()} }

// push consumes one hop of HopSamples samples and writes the feature vector
// of the frame ending with it into out (len Dims).
func (e *extractor) push(hop []int16, out []float32) {
	e.mfcc.Process(hop, e.ceps[:])
	for i := range out[:Dims] {
		out[i] = float32(e.ceps[i+1])
	}
}

// features computes the vectors of a whole clip, one per full hop.
func features(s []int16) [][]float32 {
	e := newExtractor()
	n := len(s) / HopSamples
	flat := make([]float32, n*Dims)
	out := make([][]float32, n)
	for h := 0; h < n; h++ {
		out[h] = flat[h*Dims : (h+1)*Dims : (h+1)*Dims]
		e.push(s[h*HopSamples:(h+1)*HopSamples], out[h])
	}
	return out
}
