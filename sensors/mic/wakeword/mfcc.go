package wakeword

import (
	"math"

	"gonum.org/v1/gonum/dsp/fourier"
)

// Feature analysis parameters. They are fixed rather than configurable:
// templates are stored as audio and turned into features at load time, so
// changing them later only means old templates are re-analysed, but a user
// tuning them per board would only make thresholds incomparable.
const (
	sampleRate = 16000
	HopSamples = 160 // 10 ms: one feature frame per VAD frame
	winSamples = 400 // 25 ms analysis window
	fftSize    = 512
	numFilters = 26
	numCeps    = 13 // c0..c12
	lowHz      = 60
	highHz     = 7600
	preEmph    = 0.97
)

// MFCC computes mel-frequency cepstral coefficients on a 16 kHz stream,
// one frame per 10 ms hop over the last 25 ms. It allocates nothing per
// frame.
type MFCC struct {
	fft     *fourier.FFT
	window  [winSamples]float64
	hist    [winSamples]float64 // pre-emphasised samples, oldest first
	prev    float64             // last raw sample, for pre-emphasis
	frame   [fftSize]float64
	spec    []complex128
	power   [fftSize/2 + 1]float64
	filters []melFilter
	mel     [numFilters]float64
	dct     [numCeps][numFilters]float64
}

type melFilter struct {
	first   int       // first FFT bin with a nonzero weight
	weights []float64 // triangular weights from bin first on
}

func hzToMel(f float64) float64 { return 2595 * math.Log10(1+f/700) }
func melToHz(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }

// NewMFCC builds an extractor.
func NewMFCC() *MFCC {
	m := &MFCC{fft: fourier.NewFFT(fftSize), spec: make([]complex128, fftSize/2+1)}
	for i := range m.window { // Hamming
		m.window[i] = 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/float64(winSamples-1))
	}
	m.filters = melFilterbank()
	// Orthonormal DCT-II: c0 is then the mean log energy times sqrt(F), and
	// a gain change moves c0 only.
	for k := 0; k < numCeps; k++ {
		norm := math.Sqrt(2.0 / numFilters)
		if k == 0 {
			norm = math.Sqrt(1.0 / numFilters)
		}
		for n := 0; n < numFilters; n++ {
			m.dct[k][n] = norm * math.Cos(math.Pi*float64(k)*(float64(n)+0.5)/numFilters)
		}
	}
	// No liftering: on the benchmark corpus, the HTK sinusoidal lifter
	// (which boosts c5..c12) made matches more sensitive to pitch, as the
	// higher coefficients follow resolved harmonics.
	return m
}

// BandCentres are the centre frequencies of the log-mel bands (Hz, in
// band order), for code that transforms the bands (the trainer's vocal
// tract length perturbation).
func BandCentres() []float64 {
	lo, hi := hzToMel(lowHz), hzToMel(highHz)
	c := make([]float64, numFilters)
	for i := range c {
		c[i] = melToHz(lo + (hi-lo)*float64(i+1)/float64(numFilters+1))
	}
	return c
}

// melFilterbank makes numFilters triangles equally spaced on the mel scale
// between lowHz and highHz, each with unit peak, on FFT bin centres.
func melFilterbank() []melFilter {
	lo, hi := hzToMel(lowHz), hzToMel(highHz)
	edges := make([]float64, numFilters+2) // in Hz
	for i := range edges {
		edges[i] = melToHz(lo + (hi-lo)*float64(i)/float64(numFilters+1))
	}
	binHz := float64(sampleRate) / fftSize
	fs := make([]melFilter, numFilters)
	for j := range fs {
		l, c, r := edges[j], edges[j+1], edges[j+2]
		first := int(math.Ceil(l / binHz))
		var w []float64
		for b := first; float64(b)*binHz < r; b++ {
			f := float64(b) * binHz
			var v float64
			if f <= c {
				v = (f - l) / (c - l)
			} else {
				v = (r - f) / (r - c)
			}
			w = append(w, math.Max(0, v))
		}
		fs[j] = melFilter{first: first, weights: w}
	}
	return fs
}

// energyFloor bounds the log of an empty band. It sits far below any real
// microphone's noise (about -100 dB re full scale per band), so it only
// matters for digital silence.
const energyFloor = 1e-10

// Process consumes exactly HopSamples samples and writes the numCeps
// coefficients c0..c12 of the 25 ms frame ending with them into out. It
// also returns the natural-log mel energies, valid until the next call.
func (m *MFCC) Process(hop []int16, out []float64) (logMel []float64) {
	copy(m.hist[:], m.hist[len(hop):])
	base := winSamples - len(hop)
	for i, s := range hop {
		x := float64(s) / 32768
		m.hist[base+i] = x - preEmph*m.prev
		m.prev = x
	}
	for i := range m.hist {
		m.frame[i] = m.hist[i] * m.window[i]
	}
	// m.frame[winSamples:] stays zero: the window is zero-padded to fftSize.
	m.fft.Coefficients(m.spec, m.frame[:])
	for i, c := range m.spec {
		m.power[i] = (real(c)*real(c) + imag(c)*imag(c)) / fftSize
	}
	for j, f := range m.filters {
		var e float64
		for k, w := range f.weights {
			e += w * m.power[f.first+k]
		}
		m.mel[j] = math.Log(math.Max(e, energyFloor))
	}
	for k := range out[:numCeps] {
		var s float64
		for n, v := range m.mel {
			s += m.dct[k][n] * v
		}
		out[k] = s
	}
	return m.mel[:]
}
