//go:build gocv

package motion

import "testing"

// BenchmarkDetectOpenCV is BenchmarkDetect for the OpenCV pipeline, on the
// same frames.
func BenchmarkDetectOpenCV(b *testing.B) {
	benchDetect(b, func(b *testing.B) detector {
		d, err := NewOpenCV(DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { d.Close() })
		return d
	})
}
