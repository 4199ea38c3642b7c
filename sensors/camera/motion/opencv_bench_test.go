//go:build gocv

package motion

import (
	"fmt"
	"testing"
)

// BenchmarkDetectOpenCV is BenchmarkDetect for the OpenCV pipeline, on the
// same frames.
func BenchmarkDetectOpenCV(b *testing.B) {
	for _, sz := range benchSizes {
		w, h := sz[0], sz[1]
		b.Run(fmt.Sprintf("%dx%d", w, h), func(b *testing.B) {
			const n = 32
			frames := benchFrames(b, w, h, n)
			d, err := NewOpenCV(DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
			defer d.Close()
			for i := range 2 * n {
				d.Detect(frames[i%n], w, w, h)
			}
			b.SetBytes(int64(w * h))
			b.ReportAllocs()
			cpu := startCPU()
			for i := 0; b.Loop(); i++ {
				d.Detect(frames[i%n], w, w, h)
			}
			cpu.report(b)
		})
	}
}
