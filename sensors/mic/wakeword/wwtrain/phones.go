package wwtrain

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// The phone head (Config.PhoneWeight) is a training-only output beside
// the detector's: a softmax over espeak-ng's phoneme symbols and a blank
// on the top layer, trained with CTC (Graves et al. 2006) to spell out
// what was said in every clip whose spoken utterance lies whole in it.
// The detector's own loss only says whether a clip holds the phrase, and
// a near miss that changes one vowel ("hey robat") earns the same answer
// as "the weather is nice"; spelling asks the shared layers to keep which
// vowel it was. CTC needs no timing, which espeak-ng's command line does
// not give. The model file never holds the head.

// phoneSet maps espeak-ng's phoneme symbols (the characters of its -x
// transcriptions, stress and boundaries dropped: barePhonemes) to the
// head's outputs; output 0 is CTC's blank.
type phoneSet struct {
	ids map[rune]uint8
	// text[accent+"|"+text] is that accent's transcription of text.
	text map[string][]uint8
}

// size is the head's number of outputs.
func (p *phoneSet) size() int { return len(p.ids) + 1 }

// transcribe returns the phone set of texts per accent (keys
// accent+"|"+text): the symbols are numbered in sorted order, so the
// same texts give the same head.
func transcribe(ctx context.Context, syn *synth, texts map[string][]string) (*phoneSet, error) {
	raw := map[string]string{}
	for _, a := range slices.Sorted(maps.Keys(texts)) {
		ts := slices.Clone(texts[a])
		slices.Sort(ts)
		ts = slices.Compact(ts)
		ps, err := syn.phonemes(ctx, a, ts)
		if err != nil {
			return nil, err
		}
		for i, t := range ts {
			raw[a+"|"+t] = ps[i]
		}
	}
	var syms []rune
	for _, s := range raw {
		syms = append(syms, []rune(s)...)
	}
	slices.Sort(syms)
	syms = slices.Compact(syms)
	if len(syms) > 254 {
		return nil, fmt.Errorf("espeak-ng transcriptions use %d symbols: too many for the phone head", len(syms))
	}
	p := &phoneSet{ids: map[rune]uint8{}, text: map[string][]uint8{}}
	for i, r := range syms {
		p.ids[r] = uint8(i + 1)
	}
	for k, s := range raw {
		ids := make([]uint8, 0, len(s))
		for _, r := range s {
			ids = append(ids, p.ids[r])
		}
		p.text[k] = ids
	}
	return p, nil
}

// phoneTarget is what the head must spell in frames [from, to) of a clip.
type phoneTarget struct {
	from, to int16
	ids      []uint8
}

// Slack around an utterance for its phone target: the frames just before
// it (onsets are soft) and after it, where a causal network may still be
// spelling its last sounds (the detector's fire window ends posAfter hops
// after the phrase for the same reason).
const (
	phoneLead  = 3
	phoneTrail = posAfter
)

// wholeUtterance is the phone target of an utterance of ids that spans
// samples [at, end) of a clip, if it lies whole in the clip and its
// frames can hold the spelling; ok is false otherwise.
func wholeUtterance(at, end int, ids []uint8) (phoneTarget, bool) {
	if at < 0 || len(ids) == 0 {
		return phoneTarget{}, false
	}
	from := max(0, at/wakeword.HopSamples-phoneLead)
	to := min(clipHops, (end+wakeword.HopSamples-1)/wakeword.HopSamples+phoneTrail)
	if to-from < ctcMinFrames(ids) {
		return phoneTarget{}, false
	}
	return phoneTarget{from: int16(from), to: int16(to), ids: ids}, true
}

// ctcMinFrames is the fewest frames that can spell ids: one per symbol,
// and a blank between two equal ones.
func ctcMinFrames(ids []uint8) int {
	n := len(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			n++
		}
	}
	return n
}

// addHead gives t a phone head of n outputs, its weights drawn from r
// after all others (so a network without one draws what it always did).
func (t *tcn) addHead(n int, r *rand.Rand) {
	old := t.params
	t.phones = n
	c := t.layers[len(t.layers)-1].out
	t.params = make([]float32, len(old)+n*c+n)
	copy(t.params, old)
	t.bind(t.params)
	for j := range t.phW {
		t.phW[j] = float32(r.NormFloat64() / math.Sqrt(float64(c)))
	}
}

// ctcWork is one worker's scratch for the phone head.
type ctcWork struct {
	prob        []float64 // T × K softmax
	alpha, beta []float64 // T × S
	ext         []uint8   // the target with blanks: S = 2·len+1
	dtop        []float32 // frames × channels
	occ         []float64 // K
}

// headProbs is the head's softmax over frames [from, from+T) after
// forward (T × outputs, in w's scratch).
func (t *tcn) headProbs(w *work, from, T int) []float64 {
	c := t.layers[len(t.layers)-1].out
	K := t.phones
	if w.ctc == nil {
		w.ctc = &ctcWork{}
	}
	cw := w.ctc
	cw.prob = slices.Grow(cw.prob[:0], T*K)[:T*K]
	top := w.h[len(t.layers)-1]
	prob := cw.prob
	for f := range T {
		h := top[(from+f)*c : (from+f+1)*c]
		row := prob[f*K : (f+1)*K]
		hi := math.Inf(-1)
		for k := range row {
			z := float64(wakeword.Dot(t.phW[k*c:(k+1)*c], h) + t.phB[k])
			row[k] = z
			hi = max(hi, z)
		}
		var sum float64
		for k, z := range row {
			row[k] = math.Exp(z - hi)
			sum += row[k]
		}
		for k := range row {
			row[k] /= sum
		}
	}
	return prob
}

// extend is ids with CTC's blanks around and between its symbols, in
// w's scratch, with room for the forward and backward variables over T
// frames.
func (cw *ctcWork) extend(ids []uint8, T int) []uint8 {
	S := 2*len(ids) + 1
	cw.ext, cw.alpha, cw.beta = slices.Grow(cw.ext[:0], S)[:S], slices.Grow(cw.alpha[:0], T*S)[:T*S], slices.Grow(cw.beta[:0], T*S)[:T*S]
	clear(cw.ext)
	for i, id := range ids {
		cw.ext[2*i+1] = id
	}
	return cw.ext
}

// spell is the log-probability that the head spells tg.ids in tg's
// frames, after forward.
func (t *tcn) spell(w *work, tg phoneTarget) float64 {
	from, T := int(tg.from), int(tg.to-tg.from)
	prob := t.headProbs(w, from, T)
	ext := w.ctc.extend(tg.ids, T)
	return ctc(prob, t.phones, T, ext, w.ctc.alpha, w.ctc.beta)
}

// phoneLoss runs the head over tg's frames after forward, adds to g the
// gradient of scale × (CTC loss per symbol) for the head's weights, and
// returns it with the gradient for the top layer's output (for backward;
// nil if tg cannot be spelt) and the loss per symbol.
func (t *tcn) phoneLoss(w *work, g *tcn, tg phoneTarget, scale float32, frames int) (dtop []float32, loss float64) {
	c := t.layers[len(t.layers)-1].out
	K := t.phones
	from, T := int(tg.from), int(tg.to-tg.from)
	logP := t.spell(w, tg)
	if math.IsInf(logP, -1) || math.IsNaN(logP) {
		return nil, 0 // cannot be spelt in these frames: no term
	}
	cw := w.ctc
	prob, ext := cw.prob, cw.ext
	S := len(ext)
	cw.dtop, cw.occ = slices.Grow(cw.dtop[:0], frames*c)[:frames*c], slices.Grow(cw.occ[:0], K)[:K]
	top := w.h[len(t.layers)-1]
	per := 1 / float64(len(tg.ids))
	dtop = cw.dtop
	clear(dtop)
	alpha, beta := cw.alpha, cw.beta
	for f := range T {
		occ := cw.occ
		clear(occ)
		var norm float64
		for s := range S {
			v := alpha[f*S+s] * beta[f*S+s]
			occ[ext[s]] += v
			norm += v
		}
		h := top[(from+f)*c : (from+f+1)*c]
		d := dtop[(from+f)*c : (from+f+1)*c]
		for k := range K {
			dz := scale * float32(per*(prob[f*K+k]-occ[k]/norm))
			if dz == 0 {
				continue
			}
			g.phB[k] += dz
			axpy(g.phW[k*c:(k+1)*c], dz, h)
			axpy(d, dz, t.phW[k*c:(k+1)*c])
		}
	}
	return dtop, -logP * per
}

// ctc computes log p(ext | prob) for the blank-extended target ext over
// T frames of K-way probabilities, leaving in alpha and beta (T × S) the
// per-frame rescaled forward and backward variables, whose products are
// proportional, within each frame, to the posterior of each state.
func ctc(prob []float64, K, T int, ext []uint8, alpha, beta []float64) float64 {
	S := len(ext)
	skip := func(s int) bool { return s >= 2 && ext[s] != 0 && ext[s] != ext[s-2] }
	clear(alpha)
	alpha[0] = prob[int(ext[0])]
	if S > 1 {
		alpha[1] = prob[int(ext[1])]
	}
	var logP float64
	scale := func(row []float64) bool {
		var sum float64
		for _, v := range row {
			sum += v
		}
		if !(sum > 0) {
			return false
		}
		for i := range row {
			row[i] /= sum
		}
		logP += math.Log(sum)
		return true
	}
	if !scale(alpha[:S]) {
		return math.Inf(-1)
	}
	for f := 1; f < T; f++ {
		prev, cur := alpha[(f-1)*S:f*S], alpha[f*S:(f+1)*S]
		p := prob[f*K : (f+1)*K]
		for s := range S {
			a := prev[s]
			if s >= 1 {
				a += prev[s-1]
			}
			if skip(s) {
				a += prev[s-2]
			}
			cur[s] = a * p[ext[s]]
		}
		if !scale(cur) {
			return math.Inf(-1)
		}
	}
	end := alpha[(T-1)*S+S-1]
	if S > 1 {
		end += alpha[(T-1)*S+S-2]
	}
	if !(end > 0) {
		return math.Inf(-1)
	}
	logP += math.Log(end)
	clear(beta)
	beta[(T-1)*S+S-1] = 1
	if S > 1 {
		beta[(T-1)*S+S-2] = 1
	}
	for f := T - 2; f >= 0; f-- {
		next, cur := beta[(f+1)*S:(f+2)*S], beta[f*S:(f+1)*S]
		p := prob[(f+1)*K : (f+2)*K]
		var sum float64
		for s := range S {
			b := next[s] * p[ext[s]]
			if s+1 < S {
				b += next[s+1] * p[ext[s+1]]
			}
			if s+2 < S && skip(s+2) {
				b += next[s+2] * p[ext[s+2]]
			}
			cur[s] = b
			sum += b
		}
		if sum > 0 {
			for s := range cur {
				cur[s] /= sum
			}
		}
	}
	return logP
}

// phoneTexts are the texts (per accent) whose phones the head learns:
// the phrase and the near misses.
func phoneTexts(sets ...[]utt) map[string][]string {
	out := map[string][]string{}
	for _, set := range sets {
		for _, u := range set {
			out[u.d.Voice.Accent] = append(out[u.d.Voice.Accent], u.d.Text)
		}
	}
	return out
}
