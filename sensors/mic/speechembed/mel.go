package speechembed

import (
	"math"
	"math/cmplx"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
)

// Mel feature constants (melspectrogram.onnx).
const (
	fftSize   = modelfile.FFTSize // analysis window, samples
	frameHop  = 160               // 10 ms
	mels      = modelfile.Mels
	hopFrames = HopSamples / frameHop // 8 mel frames per 80 ms hop
	// hopContext samples of the hop before are fed with each hop, as
	// openWakeWord's streaming path does: 480 + 1280 samples give 8 frames
	// whose windows start 480 samples before the hop (the newest 128
	// samples wait for the next hop).
	hopContext = 480
	hopInput   = hopContext + HopSamples
	topDB      = 80 // dB below the hop's loudest value that everything is raised to
)

// melBank computes log-mel frames as melspectrogram.onnx does: a periodic
// 512-point STFT of the windowed samples (int16 scale), power, the mel
// filters, 10·log10 floored at 1e-10, then per call the floor at the
// maximum − 80 dB and openWakeWord's x/10 + 2. It works in float64 (an FFT
// instead of the graph's 257×512 convolutions) and rounds at the end.
type melBank struct {
	window  [fftSize]float64
	filters [mels][]float64 // per band, the weights of bins lo..lo+len
	lo      [mels]int
	twiddle [fftSize / 2]complex128
	rev     [fftSize]int
}

func newMelBank(window, filters []float32) *melBank {
	m := &melBank{}
	for i, w := range window {
		m.window[i] = float64(w)
	}
	for j := range mels {
		lo, hi := modelfile.Bins, 0
		for k := range modelfile.Bins {
			if filters[k*mels+j] != 0 {
				lo, hi = min(lo, k), max(hi, k+1)
			}
		}
		m.lo[j] = min(lo, hi)
		for k := m.lo[j]; k < hi; k++ {
			m.filters[j] = append(m.filters[j], float64(filters[k*mels+j]))
		}
	}
	for i := range m.twiddle {
		m.twiddle[i] = cmplx.Rect(1, -2*math.Pi*float64(i)/fftSize)
	}
	bits := 0
	for 1<<bits < fftSize {
		bits++
	}
	for i := range m.rev {
		r := 0
		for b := range bits {
			r |= (i >> b & 1) << (bits - 1 - b)
		}
		m.rev[i] = r
	}
	return m
}

// melScratch is the per-stream working memory of melBank.hop.
type melScratch struct {
	buf [fftSize]complex128
	db  [hopFrames * mels]float64
}

// hop turns hopInput samples into hopFrames frames of mels features in out.
func (m *melBank) hop(samples []float32, s *melScratch, out []float32) {
	peak := math.Inf(-1)
	for f := range hopFrames {
		x := samples[f*frameHop : f*frameHop+fftSize]
		for i, v := range x {
			s.buf[m.rev[i]] = complex(float64(v)*m.window[i], 0)
		}
		m.fft(&s.buf)
		for j := range mels {
			var e float64
			for i, w := range m.filters[j] {
				c := s.buf[m.lo[j]+i]
				e += w * (real(c)*real(c) + imag(c)*imag(c))
			}
			db := 10 * math.Log10(max(e, 1e-10))
			s.db[f*mels+j] = db
			peak = max(peak, db)
		}
	}
	for i, db := range s.db {
		out[i] = float32(max(db, peak-topDB)/10 + 2)
	}
}

// fft is an in-place radix-2 transform of bit-reversed input.
func (m *melBank) fft(a *[fftSize]complex128) {
	for size := 2; size <= fftSize; size <<= 1 {
		half, step := size/2, fftSize/size
		for start := 0; start < fftSize; start += size {
			for k := range half {
				t := m.twiddle[k*step] * a[start+k+half]
				a[start+k+half] = a[start+k] - t
				a[start+k] += t
			}
		}
	}
}
