package wakeword

import (
	"math"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// Why a bank of noisy templates, and why this score.
//
// MFCC distances grow quickly with background noise: on the benchmark
// corpus a phrase at 20 dB SNR was further from its clean templates than
// unrelated clean speech was. Two measures fix most of that:
//
//  1. Matched conditions. The takes are re-mixed with the background noise
//     heard just now (collected while nobody speaks) at several SNRs, and
//     the input is matched against every variant. The variant whose SNR is
//     near the input's wins, and it carries the same kind of noise.
//  2. A calibrated score. Noisy frames are closer to everything, so raw
//     distances shrink as the noise rises, for the phrase and for other
//     speech alike. Each variant therefore carries two reference distances
//     measured on its own templates: pos, how far the takes are from each
//     other (what the phrase looks like), and rev, how far a take is from
//     another take played backwards (same sounds, wrong order: what a
//     near-miss looks like). The score maps pos to 1 and rev to 0.

// bankSNRs are the variants' SNRs in dB (take RMS over noise RMS); +Inf is
// the takes as enrolled. Measured: dropping 20 or 5 lost the enrolled
// voice at those SNRs; adding 0 or 25 changed nothing.
var bankSNRs = []float64{math.Inf(1), 20, 15, 10, 5}

type variant struct {
	snr      float64
	tmpls    [][][]float32 // one feature sequence per take
	pos, rev float64
}

// score maps a length-normalised distance to the variant's scale.
func (v *variant) score(d float64) float64 {
	return 1 - (d-v.pos)/(v.rev-v.pos)
}

// buildVariants makes the bank for a model. noise may be nil (clean only).
func buildVariants(m *Model, noise []int16) []variant {
	var out []variant
	nr := audio.RMS(noise)
	for _, snr := range bankSNRs {
		if !math.IsInf(snr, 1) && (len(noise) < HopSamples*20 || nr < 1) {
			continue // no usable noise sample (or digital silence): clean only
		}
		v := variant{snr: snr}
		for i, t := range m.Takes {
			if !math.IsInf(snr, 1) {
				t = mixNoise(t, noise, nr, snr, i)
			}
			v.tmpls = append(v.tmpls, features(t))
		}
		if !v.calibrate() {
			continue
		}
		out = append(out, v)
	}
	return out
}

// mixNoise adds noise at snr dB below the take's RMS. Each take gets a
// different stretch of the noise, so that the takes' noise is independent
// like the input's; the stretch is contiguous when the sample is long
// enough, because a wrap-around joint clicks in coloured noise.
func mixNoise(take, noise []int16, noiseRMS, snr float64, k int) []int16 {
	g := audio.RMS(take) / math.Pow(10, snr/20) / noiseRMS
	out := make([]int16, len(take))
	o := 0
	if spare := len(noise) - len(take); spare > 0 {
		o = (k * 5333) % (spare + 1)
	} else {
		o = (k * 5333) % len(noise)
	}
	for i, s := range take {
		x := float64(s) + g*float64(noise[(o+i)%len(noise)])
		out[i] = int16(max(-32768, min(32767, math.Round(x))))
	}
	return out
}

func (v *variant) calibrate() bool {
	n := len(v.tmpls)
	var pos, rev float64
	var np, nr int
	for a := 0; a < n; a++ {
		for b := 0; b < n; b++ {
			if a == b {
				continue
			}
			if a < b {
				if d := DTW(v.tmpls[a], v.tmpls[b]); !math.IsInf(d, 1) {
					pos += d
					np++
				}
			}
			if d := DTW(v.tmpls[a], reversed(v.tmpls[b])); !math.IsInf(d, 1) {
				rev += d
				nr++
			}
		}
	}
	if np == 0 || nr == 0 {
		return false
	}
	v.pos, v.rev = pos/float64(np), rev/float64(nr)
	// A phrase that reads the same backwards (or takes more different from
	// each other than from reversals) gives no usable scale.
	return v.rev > v.pos*1.05
}

func reversed(x [][]float32) [][]float32 {
	y := make([][]float32, len(x))
	for i := range x {
		y[i] = x[len(x)-1-i]
	}
	return y
}
