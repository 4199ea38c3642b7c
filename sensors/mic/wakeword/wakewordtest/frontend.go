// Package wakewordtest has a small deterministic wakeword.Frontend for
// tests: the product's frontend is a neural network whose weights tests
// should not need, and whose cost would dominate them.
package wakewordtest

import (
	"math"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// Frontend describes each 80 ms of sound by the log power of twelve
// frequencies (Goertzel filters, 150 Hz to 3.5 kHz) in each of its eight
// 10 ms frames: 96 values that tell vowels, tones and noise apart, which
// is all a test head needs. Like the real frontend it needs some context
// before its first embedding (Warmup samples), and it is a pure function
// of the stream since the last Reset.
type Frontend struct {
	buf  []int16
	seen int
}

// Warmup is the audio before the first embedding: three hops of context,
// as the real frontend needs its own.
const Warmup = 3 * wakeword.EmbedHop

var freqs = [12]float64{150, 250, 350, 500, 650, 800, 1000, 1300, 1700, 2200, 2800, 3500}

var coefs = func() (c [12]float64) {
	for i, f := range freqs {
		c[i] = 2 * math.Cos(2*math.Pi*f/16000)
	}
	return c
}()

// Push implements wakeword.Frontend.
func (f *Frontend) Push(dst []wakeword.Embedding, samples []int16) []wakeword.Embedding {
	for len(samples) > 0 {
		n := min(len(samples), wakeword.EmbedHop-len(f.buf))
		f.buf = append(f.buf, samples[:n]...)
		samples = samples[n:]
		f.seen += n
		if len(f.buf) < wakeword.EmbedHop {
			continue
		}
		if f.seen >= Warmup+wakeword.EmbedHop {
			dst = append(dst, embed(f.buf))
		}
		f.buf = f.buf[:0]
	}
	return dst
}

// Reset implements wakeword.Frontend.
func (f *Frontend) Reset() { f.buf, f.seen = f.buf[:0], 0 }

func embed(x []int16) (e wakeword.Embedding) {
	const frame = wakeword.EmbedHop / 8
	for t := range 8 {
		fr := x[t*frame : (t+1)*frame]
		for k, c := range coefs {
			var s1, s2 float64
			for _, v := range fr {
				s := float64(v)/32768 + c*s1 - s2
				s2, s1 = s1, s
			}
			p := s1*s1 + s2*s2 - c*s1*s2
			e[t*12+k] = float32(math.Log10(p+1e-6)) / 4
		}
	}
	return e
}
