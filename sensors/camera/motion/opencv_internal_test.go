//go:build gocv

package motion

import "testing"

// The masks work in the OpenCV pipeline too, on rows with padding.
func TestOpenCVMasksAndStride(t *testing.T) {
	const stride = 352 // padded rows must be handled
	checkMasks(t, stride, func(t *testing.T, cfg Config) detector {
		d, err := NewOpenCV(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { d.Close() })
		return d
	})
}
