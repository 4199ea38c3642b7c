package audio

import (
	"math"
	"math/rand/v2"
)

// FloorDBFS is what silence reads as. Digital zero would be -Inf, which
// JSON cannot carry and a dashboard cannot draw; -120 dB is below any real
// converter's noise.
const FloorDBFS = -120

// DBFS converts an amplitude in the int16 scale to dB relative to full
// scale (32768), clamped at FloorDBFS. RMS values use the same reference,
// so a full-scale square wave reads 0 dBFS and a full-scale sine -3 dBFS.
func DBFS(amplitude float64) float64 {
	if amplitude <= 0 {
		return FloorDBFS
	}
	return math.Max(FloorDBFS, 20*math.Log10(amplitude/32768))
}

// Meter accumulates peak and RMS over a block of samples.
type Meter struct {
	sumSq float64
	peak  int32
	n     int
}

// Add accumulates samples.
func (m *Meter) Add(s []int16) {
	for _, v := range s {
		x := int32(v)
		if x < 0 {
			x = -x
		}
		if x > m.peak {
			m.peak = x
		}
		m.sumSq += float64(v) * float64(v)
	}
	m.n += len(s)
}

// N is the number of samples accumulated.
func (m *Meter) N() int { return m.n }

// Read returns peak and RMS in dBFS and resets the meter.
func (m *Meter) Read() (peak, rms float64) {
	if m.n == 0 {
		return FloorDBFS, FloorDBFS
	}
	peak = DBFS(float64(m.peak))
	rms = DBFS(math.Sqrt(m.sumSq / float64(m.n)))
	*m = Meter{}
	return peak, rms
}

// RMS is the root-mean-square amplitude of s in the int16 scale.
func RMS(s []int16) float64 {
	if len(s) == 0 {
		return 0
	}
	var sum float64
	for _, v := range s {
		sum += float64(v) * float64(v)
	}
	return math.Sqrt(sum / float64(len(s)))
}

// Noise generates deterministic white or pink noise, so the simulator and
// tests produce the same sound on every run.
type Noise struct {
	pink bool
	rng  *rand.Rand
	b    [7]float64 // pink filter state
	amp  float64    // output RMS in the int16 scale
}

// NewNoise makes noise of the given colour ("white" or "pink") with an RMS
// level of dbfs, seeded with seed.
func NewNoise(colour string, dbfs float64, seed uint64) *Noise {
	n := &Noise{pink: colour == "pink", rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
	n.amp = 32768 * math.Pow(10, dbfs/20)
	return n
}

// Next returns one float sample (int16 scale, unclipped).
func (n *Noise) Next() float64 {
	w := n.rng.NormFloat64()
	if !n.pink {
		return w * n.amp
	}
	// Paul Kellet's economy pink filter: -3 dB/octave within ±0.5 dB over
	// the audio band.
	b := &n.b
	p := 0.0
	for i := range pinkA {
		b[i] = pinkA[i]*b[i] + pinkC[i]*w
		p += b[i]
	}
	p += b[6] + w*pinkDirect
	b[6] = w * pinkDelayed
	return p / pinkRMS * n.amp
}

var (
	pinkA = [6]float64{0.99886, 0.99332, 0.96900, 0.86650, 0.55000, -0.7616}
	pinkC = [6]float64{0.0555179, 0.0750759, 0.1538520, 0.3104856, 0.5329522, -0.0168980}
)

const (
	pinkDirect  = 0.5362
	pinkDelayed = 0.115926
)

// pinkRMS is the filter's output RMS for unit white input, computed from
// its coefficients (sum of the one-pole sections' covariances plus the
// direct and delayed taps) so that NewNoise's level is exact.
var pinkRMS = func() float64 {
	v := pinkDirect*pinkDirect + pinkDelayed*pinkDelayed
	for i := range pinkA {
		for j := range pinkA {
			v += pinkC[i] * pinkC[j] / (1 - pinkA[i]*pinkA[j])
		}
		// b_i(t) correlates with w(t) (direct tap) and w(t-1) (delayed tap).
		v += 2 * (pinkC[i]*pinkDirect + pinkA[i]*pinkC[i]*pinkDelayed)
	}
	return math.Sqrt(v)
}()

// Fill writes len(dst) samples, clipped to int16.
func (n *Noise) Fill(dst []int16) {
	for i := range dst {
		dst[i] = clip16(float32(n.Next()))
	}
}

// MixAtSNR adds noise to a copy of speech so that the ratio of the speech's
// RMS to the noise's RMS is snrDB. The speech's own RMS is measured over the
// clip as given: pass it trimmed of silence for the SNR to mean what it says.
func MixAtSNR(speech []int16, noise *Noise, snrDB float64) []int16 {
	out := make([]int16, len(speech))
	target := RMS(speech) / math.Pow(10, snrDB/20)
	g := target / noise.amp
	for i, s := range speech {
		out[i] = clip16(float32(float64(s) + g*noise.Next()))
	}
	return out
}
