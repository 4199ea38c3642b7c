package wakeword

import (
	"math"
	"testing"
)

// referenceMFCC computes the same quantities the slow, obvious way: a
// direct DFT instead of gonum's FFT, the mel triangles evaluated from their
// definition for each bin, and the DCT from its formula. It shares no code
// with MFCC beyond the constants.
func referenceMFCC(window []float64) (logMel [numFilters]float64, ceps [numCeps]float64) {
	var frame [fftSize]float64
	for i := 0; i < winSamples; i++ {
		w := 0.54 - 0.46*math.Cos(2*math.Pi*float64(i)/float64(winSamples-1))
		frame[i] = window[i] * w
	}
	var power [fftSize/2 + 1]float64
	for k := range power {
		var re, im float64
		for n, x := range frame {
			ph := -2 * math.Pi * float64(k) * float64(n) / fftSize
			re += x * math.Cos(ph)
			im += x * math.Sin(ph)
		}
		power[k] = (re*re + im*im) / fftSize
	}
	mel := func(f float64) float64 { return 2595 * math.Log10(1+f/700) }
	lo, hi := mel(lowHz), mel(highHz)
	step := (hi - lo) / (numFilters + 1)
	for j := 0; j < numFilters; j++ {
		var e float64
		for k := range power {
			m := mel(float64(k) * sampleRate / fftSize)
			l, c, r := lo+float64(j)*step, lo+float64(j+1)*step, lo+float64(j+2)*step
			// Triangle with vertices at mel l, c, r — but linear in Hz,
			// as the filters are defined, so convert back.
			f := float64(k) * sampleRate / fftSize
			hz := func(m float64) float64 { return 700 * (math.Pow(10, m/2595) - 1) }
			var w float64
			switch {
			case m > l && m <= c:
				w = (f - hz(l)) / (hz(c) - hz(l))
			case m > c && m < r:
				w = (hz(r) - f) / (hz(r) - hz(c))
			}
			e += w * power[k]
		}
		logMel[j] = math.Log(math.Max(e, 1e-10))
	}
	for k := 0; k < numCeps; k++ {
		var s float64
		for n := 0; n < numFilters; n++ {
			s += logMel[n] * math.Cos(math.Pi*float64(k)*(float64(n)+0.5)/numFilters)
		}
		if k == 0 {
			ceps[k] = s * math.Sqrt(1.0/numFilters)
		} else {
			ceps[k] = s * math.Sqrt(2.0/numFilters)
		}
	}
	return
}

// feed runs a signal through MFCC and returns the coefficients and log mel
// energies of the last frame, plus the pre-emphasised window it saw.
func feed(sig []float64) (ceps [numCeps]float64, logMel [numFilters]float64, win []float64) {
	m := NewMFCC()
	hop := make([]int16, HopSamples)
	var lm []float64
	for i := 0; i+HopSamples <= len(sig); i += HopSamples {
		for k := range hop {
			hop[k] = int16(math.Round(sig[i+k]))
		}
		lm = m.Process(hop, ceps[:])
	}
	copy(logMel[:], lm)
	// The window the last frame covered, pre-emphasised as MFCC does
	// (from the int16-rounded samples it actually received).
	n := len(sig) / HopSamples * HopSamples
	win = make([]float64, winSamples)
	for i := range win {
		idx := n - winSamples + i
		x := math.Round(sig[idx]) / 32768
		prev := 0.0
		if idx > 0 {
			prev = math.Round(sig[idx-1]) / 32768
		}
		win[i] = x - preEmph*prev
	}
	return
}

func sine(freq, amp float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = amp * math.Sin(2*math.Pi*freq*float64(i)/sampleRate)
	}
	return s
}

func TestMFCCMatchesReferenceOnTones(t *testing.T) {
	for _, f := range []float64{250, 1000, 3150} {
		sig := sine(f, 10000, 4000)
		got, gotMel, win := feed(sig)
		wantMel, want := referenceMFCC(win)
		for j := range wantMel {
			if math.Abs(gotMel[j]-wantMel[j]) > 1e-6*math.Max(1, math.Abs(wantMel[j])) {
				t.Fatalf("%v Hz: log mel[%d] = %.6f, reference %.6f", f, j, gotMel[j], wantMel[j])
			}
		}
		for k := range want {
			if math.Abs(got[k]-want[k]) > 1e-6*math.Max(1, math.Abs(want[k])) {
				t.Fatalf("%v Hz: c%d = %.6f, reference %.6f", f, k, got[k], want[k])
			}
		}
		// The loudest band is the one whose centre is nearest the tone.
		lo, hi := hzToMel(lowHz), hzToMel(highHz)
		best, bestD := 0, math.Inf(1)
		for j := 0; j < numFilters; j++ {
			c := melToHz(lo + (hi-lo)*float64(j+1)/(numFilters+1))
			if d := math.Abs(c - f); d < bestD {
				best, bestD = j, d
			}
		}
		loud := 0
		for j := range gotMel {
			if gotMel[j] > gotMel[loud] {
				loud = j
			}
		}
		if loud != best {
			t.Errorf("%v Hz: loudest band %d, want %d", f, loud, best)
		}
	}
}

func TestMFCCGainMovesOnlyC0(t *testing.T) {
	// Doubling the amplitude multiplies every band's power by 4: each log
	// energy gains ln 4, so with the orthonormal DCT c0 gains ln4·√F and
	// the other coefficients (sums of cosines over a full period) stay.
	// A broadband signal, so that int16 rounding is negligible in every
	// band (a pure tone leaves far bands at the rounding noise, which does
	// not scale).
	x := make([]float64, 4000)
	for _, f := range []float64{130, 310, 570, 900, 1400, 2100, 3100, 4300, 5800, 7100} {
		for i, v := range sine(f, 1000, len(x)) {
			x[i] += v
		}
	}
	y := make([]float64, len(x))
	for i := range x {
		y[i] = 2 * x[i]
	}
	a, _, _ := feed(x)
	b, _, _ := feed(y)
	if d := b[0] - a[0]; math.Abs(d-math.Log(4)*math.Sqrt(numFilters)) > 1e-3 {
		t.Fatalf("c0 moved by %.5f, want %.5f", d, math.Log(4)*math.Sqrt(numFilters))
	}
	for k := 1; k < numCeps; k++ {
		if math.Abs(b[k]-a[k]) > 1e-3 {
			t.Fatalf("c%d moved by %.5f with gain", k, b[k]-a[k])
		}
	}
}

func TestMFCCOfSilence(t *testing.T) {
	c, lm, _ := feed(make([]float64, 2000))
	for j, v := range lm {
		if v != math.Log(energyFloor) {
			t.Fatalf("band %d of silence = %v", j, v)
		}
	}
	if want := math.Log(energyFloor) * math.Sqrt(numFilters); math.Abs(c[0]-want) > 1e-9 {
		t.Fatalf("c0 of silence %v, want %v", c[0], want)
	}
	for k := 1; k < numCeps; k++ {
		if math.Abs(c[k]) > 1e-9 {
			t.Fatalf("c%d of silence = %v, want 0", k, c[k])
		}
	}
}

func TestMelFilterbankCoversBand(t *testing.T) {
	fs := melFilterbank()
	// Every bin between the first and last centre is covered by two
	// overlapping triangles whose weights sum to 1.
	lo, hi := hzToMel(lowHz), hzToMel(highHz)
	c0 := melToHz(lo + (hi-lo)/(numFilters+1))
	cN := melToHz(lo + (hi-lo)*numFilters/(numFilters+1))
	binHz := float64(sampleRate) / fftSize
	for b := int(math.Ceil(c0/binHz)) + 1; float64(b)*binHz < cN; b++ {
		var sum float64
		for _, f := range fs {
			if k := b - f.first; k >= 0 && k < len(f.weights) {
				sum += f.weights[k]
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("bin %d (%.0f Hz): weights sum to %v", b, float64(b)*binHz, sum)
		}
	}
}

func BenchmarkMFCCHop(b *testing.B) {
	m := NewMFCC()
	hop := make([]int16, HopSamples)
	for i := range hop {
		hop[i] = int16(1000 * math.Sin(float64(i)))
	}
	var out [numCeps]float64
	b.ReportAllocs()
	for b.Loop() {
		m.Process(hop, out[:])
	}
}
