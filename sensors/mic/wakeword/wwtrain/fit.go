package wwtrain

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// fit trains net on ds (on clips of it, or all of them if nil):
// minibatches of clips in a seeded order, loss = the
// mean cross-entropy of the positive frames plus that of the negative
// frames (so the rare positives weigh as much as the many negatives),
// gradients summed over workers in a fixed order, Adam with a cosine
// learning-rate decay. It returns the last epoch's mean loss.
func fit(ctx context.Context, cfg Config, seed uint64, net *tcn, ds *dataset, clips []int, r *rand.Rand, pr *progress) float64 {
	// The batch is cut into a fixed number of shards, whatever the number
	// of workers, and their gradients are summed in shard order: float
	// sums depend on their order, and the model must not depend on the
	// machine.
	const shards = 4
	nw := min(cfg.Workers, shards)
	grads := make([][]float32, shards)
	works := make([]*work, nw)
	losses := make([]float64, shards)
	phLosses := make([]float64, shards)
	for i := range grads {
		grads[i] = make([]float32, len(net.params))
	}
	for i := range works {
		works[i] = net.newWork(clipHops)
	}
	opt := newAdam(len(net.params))
	var ema []float32
	if cfg.EMADecay > 0 {
		ema = slices.Clone(net.params)
		// The average starts at the initial weights; their share is
		// d^steps by the end (0.999^8940 ≈ 1e-4 for the default run).
		defer func() {
			if ctx.Err() == nil {
				copy(net.params, ema)
			}
		}()
	}
	masks := maskPlan{on: cfg.SpecAugment, seed: seed}
	if cfg.VTLP > 0 {
		masks.warp = newWarper(cfg.VTLP, ds.mean, ds.std)
	}
	smooth := 1
	if cfg.SmoothPeaks {
		smooth = (&wakeword.Net{Smooth: cfg.SmoothHops}).SmoothHops()
	}
	if clips == nil {
		clips = make([]int, ds.n)
		for i := range clips {
			clips[i] = i
		}
	}
	nc := len(clips)
	steps := cfg.Epochs * ((nc + cfg.Batch - 1) / cfg.Batch)
	step := 0
	order := make([]int, nc)
	var epochLoss, epochPhones float64
	for ep := 0; ep < cfg.Epochs; ep++ {
		copy(order, clips)
		r.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		epochLoss, epochPhones = 0, 0
		batches := 0
		for b := 0; b < nc; b += cfg.Batch {
			if ctx.Err() != nil {
				return 0
			}
			batch := order[b:min(nc, b+cfg.Batch)]
			wt := batchWeights(ds, batch, float32(cfg.NegClipWeight))
			wt.posFrame, wt.near = float32(cfg.PosFrameWeight), float32(cfg.NearWeight)
			if net.phones > 0 {
				wt.phone *= float32(cfg.PhoneWeight)
			} else {
				wt.phone = 0
			}
			if wt.posFrame == 0 {
				wt.posFrame = frameWeight
			}
			var wg sync.WaitGroup
			for wk := 0; wk < nw; wk++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for k := wk; k < shards; k += nw {
						lo, hi := k*len(batch)/shards, (k+1)*len(batch)/shards
						losses[k], phLosses[k] = backprop(net, works[wk], grads[k], ds, batch[lo:hi], wt, masks.at(step), smooth)
					}
				}()
			}
			wg.Wait()
			for k := 1; k < shards; k++ {
				axpy(grads[0], 1, grads[k])
			}
			var bl, pl float64
			for k, l := range losses {
				bl += l
				pl += phLosses[k]
			}
			lr := cfg.LR * (0.02 + 0.98*0.5*(1+math.Cos(math.Pi*float64(step)/float64(steps))))
			opt.step(net.params, grads[0], lr)
			if ema != nil {
				d := float32(cfg.EMADecay)
				for i, p := range net.params {
					ema[i] = d*ema[i] + (1-d)*p
				}
			}
			step++
			epochLoss += bl
			epochPhones += pl
			batches++
			detail := fmt.Sprintf("loss %.3f", epochLoss/float64(batches))
			if wt.phone > 0 {
				detail += fmt.Sprintf(" (phones %.3f)", epochPhones/float64(batches))
			}
			pr.bar(fmt.Sprintf("training epoch %d/%d", ep+1, cfg.Epochs), step, steps, detail)
		}
		epochLoss /= float64(max(1, batches))
	}
	return epochLoss
}

// backprop runs the clips through net and writes their gradient into g
// (cleared first); it returns their share of the loss, and of that the
// phone head's (phones.go).
//
// The loss follows what makes a detection: a clip with the phrase counts
// as found if the score peaks high somewhere in its fire window, and a
// false accept happens wherever a negative frame peaks. So besides the
// mean cross-entropy of every labelled frame (weight wt.posFrame for the
// positives), each clip adds the cross-entropy of its highest
// positive-window frame and of its highest negative frame (max-pooling
// loss, Sun et al. 2016), or with smooth > 1 of the highest smoothed
// scores (smoothPeaks). The weights make each of the four terms a mean
// over the batch.
func backprop(net *tcn, w *work, g []float32, ds *dataset, clips []int, wt lossWeights, mask *masker, smooth int) (loss, phones float64) {
	clear(g)
	gv := net.view(g)
	dl := make([]float32, clipHops)
	prob := make([]float64, clipHops)
	for _, c := range clips {
		x, y := ds.clip(c)
		if mask != nil {
			x = mask.apply(w, x, c)
		}
		net.forward(w, x, clipHops)
		var dtop []float32
		if tg, ok := ds.phoneTarget(c); ok && wt.phone > 0 {
			var l float64
			dtop, l = net.phoneLoss(w, gv, tg, wt.phone, clipHops)
			phones += float64(wt.phone) * l
		}
		wt := wt
		wt.negClip *= ds.negWeight(c, wt.near)
		bestPos, bestNeg := -1, -1
		for f, l := range y {
			dl[f] = 0
			if l == labelIgnore {
				continue
			}
			z := float64(w.logit[f])
			p := 1 / (1 + math.Exp(-z))
			if l == labelPos {
				loss += float64(wt.pos*wt.posFrame) * wakeword.Softplus(-z)
				dl[f] = wt.pos * wt.posFrame * float32(p-1)
				if bestPos < 0 || w.logit[f] > w.logit[bestPos] {
					bestPos = f
				}
			} else {
				loss += float64(wt.neg) * wakeword.Softplus(z)
				dl[f] = wt.neg * float32(p)
				if bestNeg < 0 || w.logit[f] > w.logit[bestNeg] {
					bestNeg = f
				}
			}
		}
		if smooth > 1 {
			loss += smoothPeaks(w.logit, y, prob, dl, smooth, wt)
			net.backward(w, gv, x, dl, dtop, clipHops)
			continue
		}
		if bestPos >= 0 {
			z := float64(w.logit[bestPos])
			loss += float64(wt.posClip) * wakeword.Softplus(-z)
			dl[bestPos] += wt.posClip * float32(1/(1+math.Exp(-z))-1)
		}
		if bestNeg >= 0 {
			z := float64(w.logit[bestNeg])
			loss += float64(wt.negClip) * wakeword.Softplus(z)
			dl[bestNeg] += wt.negClip * float32(1/(1+math.Exp(-z)))
		}
		net.backward(w, gv, x, dl, dtop, clipHops)
	}
	return loss + phones, phones
}

// smoothPeaks adds the clip-level terms on the smoothed score s_t (the
// mean probability of frames t-k+1..t, as the picker computes it): the
// cross-entropy of the highest s_t in the fire window and of the highest
// s_t over negative frames. It adds their gradient to dl and returns
// their loss; prob is scratch.
func smoothPeaks(logit []float32, y []int8, prob []float64, dl []float32, k int, wt lossWeights) float64 {
	for f, z := range logit {
		prob[f] = 1 / (1 + math.Exp(-float64(z)))
	}
	bestPos, bestNeg := -1, -1
	var sPos, sNeg float64
	for f, l := range y {
		if l == labelIgnore || f < k-1 {
			continue
		}
		var s float64
		for j := f - k + 1; j <= f; j++ {
			s += prob[j]
		}
		s /= float64(k)
		if l == labelPos && (bestPos < 0 || s > sPos) {
			bestPos, sPos = f, s
		}
		if l == labelNeg && (bestNeg < 0 || s > sNeg) {
			bestNeg, sNeg = f, s
		}
	}
	const eps = 1e-7
	var loss float64
	if bestPos >= 0 {
		loss += float64(wt.posClip) * -math.Log(max(sPos, eps))
		c := -float64(wt.posClip) / (float64(k) * max(sPos, eps))
		for j := bestPos - k + 1; j <= bestPos; j++ {
			dl[j] += float32(c * prob[j] * (1 - prob[j]))
		}
	}
	if bestNeg >= 0 {
		loss += float64(wt.negClip) * -math.Log(max(1-sNeg, eps))
		c := float64(wt.negClip) / (float64(k) * max(1-sNeg, eps))
		for j := bestNeg - k + 1; j <= bestNeg; j++ {
			dl[j] += float32(c * prob[j] * (1 - prob[j]))
		}
	}
	return loss
}

// frameWeight is the weight of positive frames against the positive
// clip's peak when the recipe gives none (Config.PosFrameWeight 0).
const frameWeight = 0.25

// lossWeights make each loss term a mean over the batch.
type lossWeights struct {
	pos, neg, posClip, negClip, posFrame float32
	near                                 float32 // Config.NearWeight: see dataset.negWeight
	phone                                float32 // the phone head's term (phones.go)
}

func batchWeights(ds *dataset, batch []int, negClip float32) lossWeights {
	var npos, nneg, cpos, cneg, spelt int
	for _, c := range batch {
		if _, ok := ds.phoneTarget(c); ok {
			spelt++
		}
		_, y := ds.clip(c)
		var hp, hn bool
		for _, l := range y {
			switch l {
			case labelPos:
				npos++
				hp = true
			case labelNeg:
				nneg++
				hn = true
			}
		}
		if hp {
			cpos++
		}
		if hn {
			cneg++
		}
	}
	inv := func(n int) float32 {
		if n == 0 {
			return 0
		}
		return 1 / float32(n)
	}
	return lossWeights{pos: inv(npos), neg: inv(nneg), posClip: inv(cpos), negClip: negClip * inv(cneg), phone: inv(spelt)}
}
