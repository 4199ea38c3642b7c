package audio

import "math"

// Resampler converts a stream between sample rates with a windowed-sinc
// low-pass filter. USB microphones and HATs commonly run at 44.1 or 48 kHz
// only; naive decimation to 16 kHz would fold everything above 8 kHz back
// into the speech band and hurt the wake-word features, so the kernel
// cuts off just below the lower Nyquist frequency.
type Resampler struct {
	step   float64   // input samples per output sample
	half   int       // kernel half-width in input samples
	scale  float64   // kernel frequency scale (cut-off relative to input Nyquist)
	table  []float32 // kernel sampled at tableRes points per input sample, 0..half
	buf    []float32 // input history; buf[0] is input sample base
	pos    float64   // position of the next output sample in buf coordinates
	primed bool
}

const (
	zeroCrossings = 16  // per side; sets the transition band (~7% of Nyquist)
	tableRes      = 128 // kernel table points per input sample
)

// NewResampler converts from inRate to outRate.
func NewResampler(inRate, outRate int) *Resampler {
	r := &Resampler{step: float64(inRate) / float64(outRate)}
	// Cut-off: 95% of the lower of the two Nyquist frequencies, expressed
	// relative to the input Nyquist.
	r.scale = 0.95 * math.Min(1, 1/r.step)
	r.half = int(math.Ceil(zeroCrossings / r.scale))
	n := r.half*tableRes + 2
	r.table = make([]float32, n)
	for i := range r.table {
		x := float64(i) / tableRes // in input samples
		r.table[i] = float32(r.scale * sinc(r.scale*x) * blackman(x/float64(r.half)))
	}
	return r
}

func sinc(x float64) float64 {
	if x == 0 {
		return 1
	}
	return math.Sin(math.Pi*x) / (math.Pi * x)
}

// blackman is the Blackman window on [-1, 1], zero outside.
func blackman(u float64) float64 {
	if u <= -1 || u >= 1 {
		return 0
	}
	t := math.Pi * (u + 1) // 0..2π
	return 0.42 - 0.5*math.Cos(t) + 0.08*math.Cos(2*t)
}

func (r *Resampler) kernel(x float64) float32 {
	if x < 0 {
		x = -x
	}
	f := x * tableRes
	i := int(f)
	if i+1 >= len(r.table) {
		return 0
	}
	frac := float32(f - float64(i))
	return r.table[i] + (r.table[i+1]-r.table[i])*frac
}

// Process appends the output samples that src makes computable to dst.
// The output lags the input by the kernel half-width; the first output
// sample corresponds to the first input sample (zero history before it).
func (r *Resampler) Process(dst, src []float32) []float32 {
	if !r.primed {
		r.buf = make([]float32, r.half, r.half+len(src)+1024)
		r.pos = float64(r.half)
		r.primed = true
	}
	r.buf = append(r.buf, src...)
	for {
		c := int(math.Floor(r.pos))
		if c+r.half >= len(r.buf) {
			break
		}
		frac := r.pos - float64(c)
		var acc float32
		lo := c - r.half + 1
		for j := lo; j <= c+r.half; j++ {
			acc += r.buf[j] * r.kernel(float64(j-c)-frac)
		}
		dst = append(dst, acc)
		r.pos += r.step
	}
	// Drop history no future output needs.
	drop := int(math.Floor(r.pos)) - r.half + 1
	if drop > 0 {
		if drop > len(r.buf) {
			drop = len(r.buf)
		}
		r.buf = r.buf[:copy(r.buf, r.buf[drop:])]
		r.pos -= float64(drop)
	}
	return dst
}
