package wwtrain

import (
	"math/rand/v2"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// SpecAugment (Park et al. 2019), reduced to what a 26-band, 2 s clip
// needs: at each step, each clip loses one random range of up to 4 mel
// bands and one random stretch of up to 8 frames (set to the mean, 0
// after normalisation). The model cannot lean on one band or one instant
// — a microphone with a notch, a click — and sees a new variant of every
// clip each epoch for free. The masks are drawn from (seed, step, clip),
// so they do not depend on which worker trains which clip.
type maskPlan struct {
	on   bool
	seed uint64
	warp *warper // nil: no vocal tract length perturbation
}

type masker struct {
	seed, step uint64
	on         bool
	warp       *warper
}

func (p maskPlan) at(step int) *masker {
	if !p.on && p.warp == nil {
		return nil
	}
	return &masker{seed: p.seed, step: uint64(step), on: p.on, warp: p.warp}
}

const (
	maxMaskBands  = 4
	maxMaskFrames = 8
)

// apply returns a masked copy of clip c's frames x in w's buffer.
func (m *masker) apply(w *work, x []float32, c int) []float32 {
	r := rand.New(rand.NewPCG(m.seed^0x5bec, m.step<<24^uint64(c)))
	if cap(w.masked) < len(x) {
		w.masked = make([]float32, len(x))
	}
	out := w.masked[:len(x)]
	copy(out, x)
	const M = wakeword.Mels
	frames := len(x) / M
	if !m.on {
		m.warp.apply(out, x, r.Float64())
		return out
	}
	nb := r.IntN(maxMaskBands + 1)
	b0 := r.IntN(M - nb + 1)
	nf := r.IntN(maxMaskFrames + 1)
	f0 := r.IntN(frames - nf + 1)
	if m.warp != nil {
		m.warp.apply(out, x, r.Float64())
	}
	for f := 0; f < frames; f++ {
		row := out[f*M : (f+1)*M]
		if f >= f0 && f < f0+nf {
			clear(row)
			continue
		}
		clear(row[b0 : b0+nb])
	}
	return out
}

// Vocal tract length perturbation (Jaitly & Hinton 2013): a longer or
// shorter vocal tract scales a voice's formants by a factor α, and
// espeak-ng's voices span fewer vocal tracts than people do. Each clip, at
// each step, is heard as by a speaker with α drawn from 1±max: band b
// takes the spectrum at centre_b/α, interpolated between the two bands
// around it, on the features before normalisation (the dataset's mean
// and std undo it and redo it).
type warper struct {
	max       float64
	centres   []float64
	mean, std []float32
}

func newWarper(max float64, mean, std []float32) *warper {
	return &warper{max: max, centres: wakeword.BandCentres(), mean: mean, std: std}
}

// apply writes into out the frames x warped by α = 1 + max·(2u−1).
func (w *warper) apply(out, x []float32, u float64) {
	const M = wakeword.Mels
	alpha := 1 + w.max*(2*u-1)
	var lo [M]int
	var t [M]float32
	for b, c := range w.centres {
		lo[b], t[b] = w.position(c / alpha)
	}
	for f := 0; f < len(x)/M; f++ {
		src, dst := x[f*M:(f+1)*M], out[f*M:(f+1)*M]
		for b := range dst {
			i := lo[b]
			j := min(i+1, M-1)
			a := src[i]*w.std[i] + w.mean[i]
			c := src[j]*w.std[j] + w.mean[j]
			dst[b] = (a + t[b]*(c-a) - w.mean[b]) / w.std[b]
		}
	}
}

// position finds hz among the band centres: the band at or below it and
// the fraction of the way to the next (clamped at both ends).
func (w *warper) position(hz float64) (int, float32) {
	c := w.centres
	if hz <= c[0] {
		return 0, 0
	}
	for i := 0; i+1 < len(c); i++ {
		if hz < c[i+1] {
			return i, float32((hz - c[i]) / (c[i+1] - c[i]))
		}
	}
	return len(c) - 1, 0
}
