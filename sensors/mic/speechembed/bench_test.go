package speechembed

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/internal/f32"
)

// BenchmarkHop is the steady-state cost of one 80 ms hop (8 mel frames and
// one embedding) with the portable Go kernel and with the CPU's assembly
// kernel, side by side. rtf is wall time over 80 ms; cpu-rtf is the
// process's CPU time over 80 ms, the honest figure on a shared machine
// where wall time includes waiting for a core. Compare with onnxruntime:
// scripts/speechembed-reference.sh bench.
func BenchmarkHop(b *testing.B) {
	f := mustNew(b)
	r := rand.New(rand.NewPCG(1, 1))
	audio := make([]int16, 40*HopSamples)
	for i := range audio {
		audio[i] = int16(r.NormFloat64() * 3000)
	}
	for _, gen := range []bool{true, false} {
		f32.SetGeneric(gen)
		b.Run(f32.Kernel(), func(b *testing.B) {
			s := f.NewStream()
			n := 0
			emit := func(*[EmbeddingSize]float32) { n++ }
			s.Write(audio[:20*HopSamples], emit)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				off := (i % 20) * HopSamples
				s.Write(audio[off:off+HopSamples], emit)
			}
			b.StopTimer()
			hop := 80 * time.Millisecond * time.Duration(b.N)
			b.ReportMetric(float64(b.Elapsed())/float64(hop), "rtf")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(hop), "cpu-rtf")
			if n < b.N {
				b.Fatalf("%d embeddings for %d hops", n, b.N)
			}
		})
	}
	f32.SetGeneric(false)
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkEmbedClip is the batch path on a 2 s clip (16 embeddings, the
// window a head reads), what training pays per clip.
func BenchmarkEmbedClip(b *testing.B) {
	f := mustNew(b)
	r := rand.New(rand.NewPCG(2, 2))
	clip := make([]int16, 2*SampleRate)
	for i := range clip {
		clip[i] = int16(r.NormFloat64() * 3000)
	}
	cpu0 := cpuTime()
	for range b.N {
		if n := len(f.Embed(clip)); n != len(clip)/HopSamples-FirstHop+1 {
			b.Fatalf("%d embeddings", n)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/clip")
}
