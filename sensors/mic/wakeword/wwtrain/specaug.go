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
}

type masker struct{ seed, step uint64 }

func (p maskPlan) at(step int) *masker {
	if !p.on {
		return nil
	}
	return &masker{seed: p.seed, step: uint64(step)}
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
	nb := r.IntN(maxMaskBands + 1)
	b0 := r.IntN(M - nb + 1)
	nf := r.IntN(maxMaskFrames + 1)
	f0 := r.IntN(frames - nf + 1)
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
