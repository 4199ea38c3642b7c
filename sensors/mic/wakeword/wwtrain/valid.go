package wwtrain

import (
	"math"
	"slices"
	"sort"
)

// Validation is how a model does on the validation split: the phrase by
// speakers held out of training but in the training lists (valVariants in
// the training accents), training sentences, trained confusables; and the
// phrase and the confusables by flite's validation speaker, reported apart.
// The curve and the rates are espeak-ng's speakers' alone. Recipes
// are compared on it; the test groups only report the chosen one.
type Validation struct {
	Recall          []RecallRow `json:"recall"`
	NegHours        float64     `json:"negative_hours"`
	FA              int         `json:"false_accepts"`
	FAPerHour       float64     `json:"fa_per_hour"`
	FalseAccepts    []string    `json:"false_accept_texts,omitempty"`
	ConfusableN     int         `json:"confusable_clips"`
	ConfusableFired int         `json:"confusable_fired"`
	ConfusableRate  float64     `json:"confusable_fire_rate"`
	Fired           []string    `json:"confusables_fired,omitempty"`
	// Of the confusable clips, those whose accent says them exactly as
	// the phrase (espeak-ng phonemes), and how many of those fired.
	SameSoundN     int `json:"same_sound_clips"`
	SameSoundFired int `json:"same_sound_fired"`
	// The trained confusables by flite's validation speaker, apart:
	// the counts above compare with reports from before flite.
	FliteConfusableN     int        `json:"flite_confusable_clips,omitempty"`
	FliteConfusableFired int        `json:"flite_confusable_fired,omitempty"`
	Curve                []ValPoint `json:"curve"`
	// Smoothing: other score smoothings at their calibrated thresholds.
	Smoothing []ValPoint `json:"smoothing"`
}

// ValPoint is one threshold's validation rates.
type ValPoint struct {
	RawThreshold   float64 `json:"raw_threshold"`
	SmoothHops     int     `json:"smooth_hops"`
	CalibFA        int     `json:"calib_false_accepts"`
	FAPerHour      float64 `json:"fa_per_hour"`
	RecallClean    float64 `json:"recall_clean"`
	Recall10dB     float64 `json:"recall_pink_10db"`
	ConfusableRate float64 `json:"confusable_fire_rate"`
}

// valSet is the validation clips and their score traces.
type valSet struct {
	pos, neg, near       []clip
	posTr, negTr, nearTr [][]float32
	posCond              []condition
	posGroup             []string
	nearText             []string
	nearSame             []bool // the accent says it as the phrase
	nearGroup            []string
}

func newValSet(seed uint64, c *corpus) *valSet {
	v := &valSet{}
	babble := make([][]int16, len(c.valSpeech))
	for i, u := range c.valSpeech {
		babble[i] = u.x
	}
	for i, u := range c.valPos {
		for j, cd := range posConditions {
			v.pos = append(v.pos, phraseClip(u.x, cd, seed*15485863+uint64(i*len(posConditions)+j), babble))
			v.posCond = append(v.posCond, cd)
			v.posGroup = append(v.posGroup, valGroup(u.d.Voice))
		}
	}
	v.neg = speechStreams(c.valSpeech, negConditions, seed+300, babble)
	for i, u := range c.valNear {
		cd := condition{}
		if i%2 == 1 {
			cd = condition{"pink", 10}
		}
		v.near = append(v.near, phraseClip(u.x, cd, seed*32452843+uint64(i), babble))
		v.nearText = append(v.nearText, u.d.Text)
		v.nearSame = append(v.nearSame, c.sameSound[u.d.Voice.Accent+"|"+u.d.Text])
		v.nearGroup = append(v.nearGroup, valGroup(u.d.Voice))
	}
	return v
}

// Validation groups: espeak-ng's validation speakers, and flite's (in
// every run, whatever Config.OtherEngines), apart so that recipes with
// and without flite compare on the same speakers.
const (
	valGroupEspeak = "validation speakers"
	valGroupFlite  = "validation speakers (flite)"
)

func valGroup(v Voice) string {
	if v.Engine != "" {
		return valGroupFlite
	}
	return valGroupEspeak
}

func (v *valSet) clips() []clip { return slices.Concat(v.pos, v.neg, v.near) }

// take splits the traces of clips() back into the sets.
func (v *valSet) take(trs [][]float32) {
	a, b := len(v.pos), len(v.pos)+len(v.neg)
	v.posTr, v.negTr, v.nearTr = trs[:a], trs[a:b], trs[b:]
}

func (v *valSet) recall(th float64, k int, cd condition) float64 {
	var hits, n int
	for i, tr := range v.posTr {
		if v.posCond[i] != cd || v.posGroup[i] != valGroupEspeak {
			continue
		}
		n++
		if hitIn(tr, th, k, v.pos[i]) >= 0 {
			hits++
		}
	}
	return round3(float64(hits) / float64(max(1, n)))
}

// espeakNear is the number of confusable clips by espeak-ng's speakers.
func (v *valSet) espeakNear() int {
	n := 0
	for _, g := range v.nearGroup {
		if g == valGroupEspeak {
			n++
		}
	}
	return n
}

func (v *valSet) confusablesFired(th float64, k int) int {
	n := 0
	for i, tr := range v.nearTr {
		if at, _ := fires(tr, th, k); len(at) > 0 && v.nearGroup[i] == valGroupEspeak {
			n++
		}
	}
	return n
}

// report evaluates at th (the calibrated threshold) and around it.
func (v *valSet) report(th float64, calTr [][]float32, k, allowed int) Validation {
	var out Validation
	type key struct {
		g  string
		cd condition
	}
	rows := map[key]*RecallRow{}
	for i, tr := range v.posTr {
		kk := key{v.posGroup[i], v.posCond[i]}
		row := rows[kk]
		if row == nil {
			row = &RecallRow{Group: kk.g, Condition: kk.cd.String()}
			rows[kk] = row
		}
		row.add(hitIn(tr, th, k, v.pos[i]), v.pos[i].end)
	}
	for _, g := range []string{valGroupEspeak, valGroupFlite} {
		for _, cd := range posConditions {
			if row := rows[key{g, cd}]; row != nil {
				row.finish()
				out.Recall = append(out.Recall, *row)
			}
		}
	}
	out.NegHours = round3(hours(v.neg))
	for i, tr := range v.negTr {
		_, peaks := fires(tr, th, k)
		out.FA += len(peaks)
		for _, pk := range peaks {
			out.FalseAccepts = append(out.FalseAccepts, v.neg[i].said(pk))
		}
	}
	out.FAPerHour = round3(float64(out.FA) / math.Max(out.NegHours, 1e-9))
	for i, tr := range v.nearTr {
		if v.nearGroup[i] != valGroupEspeak {
			out.FliteConfusableN++
			if at, _ := fires(tr, th, k); len(at) > 0 {
				out.FliteConfusableFired++
			}
			continue
		}
		out.ConfusableN++
		if v.nearSame[i] {
			out.SameSoundN++
		}
		if at, _ := fires(tr, th, k); len(at) > 0 {
			out.ConfusableFired++
			out.Fired = append(out.Fired, v.nearText[i])
			if v.nearSame[i] {
				out.SameSoundFired++
			}
		}
	}
	out.ConfusableRate = round3(float64(out.ConfusableFired) / float64(max(1, out.ConfusableN)))
	for _, q := range []float64{0.5, 0.8, 0.9, 0.95, th, 0.98, 0.99, 0.995} {
		out.Curve = append(out.Curve, v.point(q, k, calTr))
	}
	sort.Slice(out.Curve, func(i, j int) bool { return out.Curve[i].RawThreshold < out.Curve[j].RawThreshold })
	// Other score smoothings, each with its own calibrated threshold: the
	// same traces replayed, so choosing one costs no training.
	for _, ks := range []int{1, 3, 5, 8, 12, 16} {
		p := v.point(pickThreshold(calTr, allowed, ks), ks, calTr)
		out.Smoothing = append(out.Smoothing, p)
	}
	return out
}

func (v *valSet) point(q float64, k int, calTr [][]float32) ValPoint {
	return ValPoint{RawThreshold: q, SmoothHops: k, CalibFA: countFires(calTr, q, k),
		FAPerHour:      round3(float64(countFires(v.negTr, q, k)) / math.Max(hours(v.neg), 1e-9)),
		RecallClean:    v.recall(q, k, condition{}),
		Recall10dB:     v.recall(q, k, condition{"pink", 10}),
		ConfusableRate: round3(float64(v.confusablesFired(q, k)) / float64(max(1, v.espeakNear())))}
}
