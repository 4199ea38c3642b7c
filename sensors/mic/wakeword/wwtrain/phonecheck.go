package wwtrain

import (
	"math"
	"slices"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// phoneCheck measures whether the phone head, right after training, tells
// the phrase from its confusables on the validation speakers' clips: in
// each clip, over the frames of its utterance (known here, as a detection
// would know roughly where the phrase ended), the phrase's spelling in
// any training accent against the best of every confusable's spellings.
// It is what a check of the head at detection time could do at best, so
// it says whether building one is worth it.
type phoneCheck struct {
	// Pos and Near are the validation clips of the phrase and of
	// confusables (the accent saying them as the phrase left out);
	// PosKept those where the phrase's spelling won, NearVetoed those
	// where a confusable's did.
	Pos          int `json:"pos"`
	PosKept      int `json:"pos_kept"`
	Near         int `json:"near"`
	NearVetoed   int `json:"near_vetoed"`
	PosNoisy     int `json:"pos_pink_10db"`
	PosKeptNoisy int `json:"pos_kept_pink_10db"`
	Rivals       int `json:"rival_spellings"`
}

// checkPhones runs the phone check of net on the corpus's validation
// clips by espeak-ng's speakers (text is the phrase); ds gives the
// normalisation.
func checkPhones(net *tcn, ds *dataset, c *corpus, text string, seed uint64) *phoneCheck {
	var phrase, rivals [][]uint8
	for _, a := range trainAccents {
		phrase = appendNew(phrase, c.phones.text[a+"|"+text])
	}
	for _, a := range trainAccents {
		for _, t := range c.confusables {
			if sp := c.phones.text[a+"|"+t]; !hasSpelling(phrase, sp) {
				rivals = appendNew(rivals, sp)
			}
		}
	}
	v := newValSet(seed, c)
	st := &phoneCheck{Rivals: len(rivals)}
	w := net.newWork(1)
	won := func(cl clip) bool {
		x := ds.features(cl.audio())
		frames := len(x) / wakeword.Mels
		if len(w.logit) < frames {
			w = net.newWork(frames)
		}
		net.forward(w, x, frames)
		tg := phoneTarget{from: int16(max(0, cl.start-phoneLead)), to: int16(min(frames, cl.end+phoneTrail))}
		best := func(set [][]uint8) float64 {
			b := math.Inf(-1)
			for _, sp := range set {
				tg.ids = sp
				b = max(b, net.spell(w, tg))
			}
			return b
		}
		return best(phrase) >= best(rivals)
	}
	for i, cl := range v.pos {
		if v.posGroup[i] != valGroupEspeak { // as the phone check was measured before flite
			continue
		}
		st.Pos++
		ok := won(cl)
		if ok {
			st.PosKept++
		}
		if v.posCond[i] == (condition{"pink", 10}) {
			st.PosNoisy++
			if ok {
				st.PosKeptNoisy++
			}
		}
	}
	for i, cl := range v.near {
		if v.nearSame[i] || v.nearGroup[i] != valGroupEspeak || !slices.Contains(c.confusables, v.nearText[i]) {
			continue
		}
		st.Near++
		if !won(cl) {
			st.NearVetoed++
		}
	}
	return st
}

// appendNew adds spelling sp to set unless it is empty or there already.
func appendNew(set [][]uint8, sp []uint8) [][]uint8 {
	if len(sp) == 0 || hasSpelling(set, sp) {
		return set
	}
	return append(set, sp)
}

func hasSpelling(set [][]uint8, sp []uint8) bool {
	return slices.ContainsFunc(set, func(p []uint8) bool { return slices.Equal(p, sp) })
}
