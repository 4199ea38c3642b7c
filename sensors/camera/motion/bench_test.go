package motion

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
)

// BenchmarkDetect measures the detector alone on luma planes that are
// already in memory (decode excluded), in steady state: a noisy scene with
// lighting drift and two objects crossing, so every stage does real work.
func BenchmarkDetect(b *testing.B) {
	for _, sz := range [][2]int{{640, 480}, {1280, 720}} {
		w, h := sz[0], sz[1]
		b.Run(fmt.Sprintf("%dx%d", w, h), func(b *testing.B) {
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
			const n = 32
			frames := make([][]byte, n)
			for i := range frames {
				frames[i] = make([]byte, w*h)
				scene.Render(40+i, frames[i])
			}
			d, err := New(DefaultConfig())
			if err != nil {
				b.Fatal(err)
			}
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

// cpuClock measures the benchmark goroutine's own CPU time (its OS thread's,
// with the goroutine locked to it), reported as cpu-ns/op beside ns/op: on
// a shared 2-core machine the wall time also counts time spent waiting for
// a core, which says nothing about the detector.
type cpuClock struct{ start time.Duration }

const rusageThread = 1 // RUSAGE_THREAD (Linux)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuClock {
	runtime.LockOSThread()
	return cpuClock{threadCPU()}
}

func (c cpuClock) report(b *testing.B) {
	end := threadCPU()
	runtime.UnlockOSThread()
	if c.start >= 0 && end >= 0 && b.N > 0 {
		b.ReportMetric(float64(end-c.start)/float64(b.N), "cpu-ns/op")
	}
}
