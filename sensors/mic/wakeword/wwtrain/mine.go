package wwtrain

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// Hard-negative mining. The threshold is set by the few highest-scoring
// negatives in hours of speech — "every robot needs a charger" in babble,
// a run of words in white noise — and a model that trained on 2,500
// sentences has rarely heard the exact shape that fires it. So, after the
// towers are trained, the whole model runs over MineMinutes of other
// speech by the training voices, exactly as the detector would. That
// speech is a draw of its own, under the evaluation's noise conditions
// with noise of its own, never used to calibrate, validate or test. The
// MineClips highest peaks become negative clips, cut so the peak lies
// where the loss looks, and each tower is fine-tuned on the training set
// plus those clips, so it keeps what it knew of the phrase while it
// unlearns them.
const (
	// minePeakAt is the hop of a mined clip where its peak lies: in the
	// loss region, with the receptive field's history inside the clip.
	minePeakAt = 150
	// mineCopies is how many times each mined clip is in the fine-tuning
	// set: a few hundred clips among eighteen thousand would otherwise
	// be a small part of each epoch.
	mineCopies = 2
	// tuneLRScale scales the recipe's learning rate for fine-tuning
	// (mining, the verifier): small steps from trained weights.
	tuneLRScale = 0.25
	// mineFloor is the picker's threshold for finding moments to mine:
	// low, so that a model quiet on nearly everything still gives its
	// loudest moments (the MineClips highest are taken in any case).
	mineFloor = 0.05
)

// Mining configures hard-negative mining (0 minutes: off): after the
// towers are trained, the model runs over MineMinutes of other speech by
// the training voices, its MineClips highest-scoring moments become
// negative clips, and each tower is fine-tuned on the training set plus
// them for MineEpochs; each further round mines the fine-tuned model
// again.
type Mining struct {
	MineMinutes float64 `json:"mine_minutes,omitempty"`
	MineClips   int     `json:"mine_clips,omitempty"`
	MineEpochs  int     `json:"mine_epochs,omitempty"`
	MineRounds  int     `json:"mine_rounds,omitempty"` // 0 or 1: one
	// MineNearReps adds this many utterances of each trained near miss
	// (confusable, partial or in-context phrase) to the mining speech.
	MineNearReps int `json:"mine_near_reps,omitempty"`
}

// minedClips is how many clips mining may add to the training set.
func (m Mining) minedClips() int {
	if m.MineMinutes <= 0 {
		return 0
	}
	return m.MineClips * mineCopies * max(1, m.MineRounds)
}

// mineStats says what mining found.
type mineStats struct {
	Hours  float64     `json:"hours"`
	Rounds []mineRound `json:"rounds"`
}

// mineRound is one round's find: how many clips, and the scores of the
// highest and the lowest (uncalibrated) by the model of that round.
type mineRound struct {
	Clips  int     `json:"clips"`
	Top    float64 `json:"top,omitempty"`
	Bottom float64 `json:"bottom,omitempty"`
}

// mine finds the hard negatives of n in c.mine and fine-tunes each of
// its towers on ds plus them; each further round mines the fine-tuned
// model again and fine-tunes on everything mined so far. n's towers are
// replaced, and the mined clips are added to ds.
func mine(ctx context.Context, cfg Config, n *wakeword.Net, c *corpus, ds *dataset, pr *progress) (mineStats, error) {
	trained := ds.n
	babble := make([][]int16, len(c.mine))
	for i, u := range c.mine {
		babble[i] = u.x
	}
	streams := speechStreams(c.mine, negConditions, cfg.Seed+400, babble)
	st := mineStats{Hours: round3(hours(streams))}
	for round := range max(1, cfg.MineRounds) {
		trs, err := scoreTraces(ctx, n, streams, cfg.Workers, pr.counter(fmt.Sprintf("mining hard negatives, round %d", round+1), len(streams)))
		if err != nil {
			return st, err
		}
		peaks := hardest(trs, n.SmoothHops(), cfg.MineClips)
		if len(peaks) == 0 {
			break
		}
		st.Rounds = append(st.Rounds, mineRound{Clips: len(peaks), Top: round3(peaks[0].score), Bottom: round3(peaks[len(peaks)-1].score)})
		audio, err := windows(ctx, streams, peaks, cfg.Workers)
		if err != nil {
			return st, err
		}
		ds.addNegatives(audio) // the rounds' clips add up
		tune := cfg
		tune.Epochs, tune.LR = cfg.MineEpochs, cfg.LR*tuneLRScale
		for t := range n.Towers {
			tw := &n.Towers[t]
			pr.stage(fmt.Sprintf("fine-tuning tower %d of %d on %d mined clips", t+1, len(n.Towers), (ds.n-trained)/mineCopies))
			// "mine", and the round: draws apart from the tower's training.
			seed := towerSeed(cfg.Seed, t) ^ 0x6d696e65 + uint64(round)<<40
			net := tcnFrom(*tw)
			fit(ctx, tune, seed, net, ds, nil, rand.New(rand.NewPCG(seed, 2)), pr)
			if err := ctx.Err(); err != nil {
				return st, err
			}
			*tw = net.tower(tw.Mean, tw.Std, tw.LogFloor)
		}
	}
	return st, nil
}

type minedPeak struct {
	score     float64
	clip, hop int
}

// hardest are the at most n highest detections at mineFloor in the
// traces, as the picker finds them (refractory period and smoothing),
// highest first; ties in stream order, so the choice is deterministic.
func hardest(trs [][]float32, smooth, n int) []minedPeak {
	var out []minedPeak
	for i, tr := range trs {
		p := wakeword.NewPicker(mineFloor, refractHops)
		p.Smooth = smooth
		for h, s := range tr {
			if ok, sc, pk := p.Step(int64(h), float64(s)); ok {
				out = append(out, minedPeak{sc, i, int(pk)})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out[:min(n, len(out))]
}

// windows cuts each peak's window out of its stream, mineCopies times
// each, in the order of peaks; the streams holding peaks are rendered
// again, each once, on workers goroutines.
func windows(ctx context.Context, streams []clip, peaks []minedPeak, workers int) ([][]int16, error) {
	at := map[int][]int{} // stream → indices into peaks
	var order []int
	for i, p := range peaks {
		if at[p.clip] == nil {
			order = append(order, p.clip)
		}
		at[p.clip] = append(at[p.clip], i)
	}
	cut := make([][]int16, len(peaks))
	if err := parallel(ctx, len(order), workers, func(k int) {
		s := order[k]
		x := streams[s].audio()
		for _, i := range at[s] {
			cut[i] = window(x, peaks[i].hop)
		}
	}); err != nil {
		return nil, err
	}
	out := make([][]int16, 0, len(peaks)*mineCopies)
	for _, w := range cut {
		for range mineCopies {
			out = append(out, w)
		}
	}
	return out, nil
}

// window cuts clipLen samples of x with hop `hop` at minePeakAt, shifted
// to fit inside x (a stream is far longer than a clip).
func window(x []int16, hop int) []int16 {
	from := (hop + 1 - minePeakAt) * wakeword.HopSamples
	from = min(max(0, from), max(0, len(x)-clipLen))
	w := make([]int16, clipLen)
	copy(w, x[from:])
	return w
}
