package wwtrain

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// The verifier (wakeword.Net.Verifier). Every recipe change that lowered
// the confusables on one model raised the threshold and cost recall: the
// one network has to hear the phrase in an hour of talk and to tell "hey
// robot" from "hey robat", and its weights are shared between the two.
// The verifier is a copy of each trained (and mined) tower fine-tuned on
// the phrase's clips against the near misses' clips only — confusables,
// partials, the phrase's words in other talk — so all of its weights go
// to the one-sound differences. Its probability multiplies the towers',
// so it can veto a detection but never make one; the threshold is then
// calibrated on the product as on any model.
//
// It is off by default: on five seeds it cut the validation confusables
// by 1.3–2.1 points for 1.3–1.9 points of clean recall, and its loss
// stayed near 1 on its own clips (V1 and V2 in the experiment log, docs/bench/wake-word.md).
type Verify struct {
	// VerifyEpochs is how long each verifier tower is fine-tuned (0:
	// no verifier).
	VerifyEpochs int `json:"verify_epochs,omitempty"`
	// VerifyNearWeight multiplies the near misses' clip-level negative
	// term in the verifier's training (0: 1).
	VerifyNearWeight float64 `json:"verify_near_weight,omitempty"`
	// VerifyLR is the verifier's learning rate (0: a quarter of the
	// recipe's, as for mining).
	VerifyLR float64 `json:"verify_lr,omitempty"`
}

func (v Verify) lr(recipe float64) float64 {
	if v.VerifyLR > 0 {
		return v.VerifyLR
	}
	return recipe * tuneLRScale
}

// verifyStats say what the verifier learnt from.
type verifyStats struct {
	Towers    int `json:"towers"`
	PosClips  int `json:"pos_clips"`
	NearClips int `json:"near_clips"`
	Epochs    int `json:"epochs"`
}

// verifyClips are the clips the verifier learns from: the phrase's and
// the near misses'.
func verifyClips(ds *dataset) []int {
	var out []int
	for c := range ds.npos {
		out = append(out, c)
	}
	for c := ds.near[0]; c < ds.near[1]; c++ {
		out = append(out, c)
	}
	return out
}

// verify sets n's verifier: one fine-tuned copy of each of its towers.
func verify(ctx context.Context, cfg Config, n *wakeword.Net, ds *dataset, pr *progress) (verifyStats, error) {
	st := verifyStats{Towers: len(n.Towers), PosClips: ds.npos, NearClips: ds.near[1] - ds.near[0], Epochs: cfg.VerifyEpochs}
	clips := verifyClips(ds)
	tune := cfg
	tune.Epochs, tune.LR, tune.NearWeight = cfg.VerifyEpochs, cfg.Verify.lr(cfg.LR), cfg.VerifyNearWeight
	n.Verifier = nil
	for t := range n.Towers {
		tw := &n.Towers[t]
		pr.stage(fmt.Sprintf("verifier %d of %d: the phrase against %d near-miss clips", t+1, len(n.Towers), st.NearClips))
		// "verf": draws apart from the tower's training and mining.
		seed := towerSeed(cfg.Seed, t) ^ 0x76657266
		net := tcnFrom(*tw)
		fit(ctx, tune, seed, net, ds, clips, rand.New(rand.NewPCG(seed, 2)), pr)
		if err := ctx.Err(); err != nil {
			return st, err
		}
		n.Verifier = append(n.Verifier, net.tower(tw.Mean, tw.Std, tw.LogFloor))
	}
	return st, nil
}
