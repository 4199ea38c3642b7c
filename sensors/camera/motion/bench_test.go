package motion

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

// benchFrames renders n luma planes of a noisy scene with lighting drift and
// two objects crossing, so every stage of the detector does real work.
func benchFrames(b *testing.B, w, h, n int) [][]byte {
	scene, err := camsim.New(camsim.Config{
		Width: w, Height: h, Seed: 7, Noise: 6, Drift: 0.1, DriftPeriod: 80,
		Objects: []camsim.Object{
			{W: w / 10, H: h / 4, Y: h / 2, Speed: float64(w) / 100, Start: 0, Period: 120, Level: 110},
			{W: w / 12, H: h / 5, Y: h / 5, Speed: -float64(w) / 80, Start: 20, Period: 100, Level: 150},
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	frames := make([][]byte, n)
	for i := range frames {
		frames[i] = make([]byte, w*h)
		scene.Render(40+i, frames[i])
	}
	return frames
}

var benchSizes = [][2]int{{640, 480}, {1280, 720}}

// BenchmarkDetect measures the detector alone on luma planes that are
// already in memory (decode excluded), in steady state. 32 distinct frames
// (10 MB at 640×480) keep the input out of the cache, as a camera's new
// frame is.
func BenchmarkDetect(b *testing.B) {
	benchDetect(b, func(b *testing.B) detector {
		d, err := New(DefaultConfig())
		if err != nil {
			b.Fatal(err)
		}
		return d
	})
}

// benchDetect is BenchmarkDetect for the detector that open builds (once
// per frame size), so that both pipelines are measured the same way.
func benchDetect(b *testing.B, open func(b *testing.B) detector) {
	for _, sz := range benchSizes {
		w, h := sz[0], sz[1]
		b.Run(fmt.Sprintf("%dx%d", w, h), func(b *testing.B) {
			const n = 32
			frames := benchFrames(b, w, h, n)
			d := open(b)
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

// cpuClock measures the CPU time the process spends, reported as
// cpu-ns/op beside ns/op: on a shared 2-core machine the wall time also
// counts time spent waiting for a core, which says nothing about the
// detector, while the process's CPU time counts all its threads (OpenCV
// runs some of its work on a thread pool of its own).
type cpuClock struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock { return cpuClock{processCPU()} }

func (c cpuClock) report(b *testing.B) {
	end := processCPU()
	if c.start >= 0 && end >= 0 && b.N > 0 {
		b.ReportMetric(float64(end-c.start)/float64(b.N), "cpu-ns/op")
	}
}
