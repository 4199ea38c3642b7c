//go:build gocv

package motion

import (
	"testing"

	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

func TestOpenCVMasksAndStride(t *testing.T) {
	sc := camsim.Config{
		Width: 320, Height: 240, Seed: 11, Noise: 6,
		Objects: []camsim.Object{{W: 30, H: 40, Y: 20, Speed: 5, Start: 30, Period: 120, Level: 140}},
	}
	scene, err := camsim.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	const stride = 352 // padded rows must be handled
	frame := make([]byte, 320*240)
	padded := make([]byte, stride*240)
	count := func(masks ...string) int {
		cfg := DefaultConfig()
		cfg.Masks = masks
		d, err := NewOpenCV(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		n := 0
		for i := range 300 {
			scene.Render(i, frame)
			for y := range 240 {
				copy(padded[y*stride:], frame[y*320:(y+1)*320])
			}
			if d.Detect(padded, stride, 320, 240).Motion {
				n++
			}
		}
		return n
	}
	if n := count(); n < 50 {
		t.Fatalf("unmasked: motion in %d frames", n)
	}
	if n := count("0,0,320,0,320,70,0,70"); n != 0 {
		t.Errorf("masked band: motion in %d frames", n)
	}
}
