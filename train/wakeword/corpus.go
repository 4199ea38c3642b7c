package wakeword

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	ww "github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// corpus is the synthesised speech of a run, all espeak-ng.
type corpus struct {
	pos, near, speech []utt // training voices
	mine              []utt // training voices: speech and near misses, for hard negatives
	valPos, valSpeech []utt // validation speakers
	valNear           []utt
}

type utt struct {
	x []int16
	d Delivery
}

// buildCorpus draws every delivery from the seed, leaves out the near
// misses an accent says exactly as the phrase, and synthesises them.
func buildCorpus(ctx context.Context, cfg Config, syn *synth, pr *progress) (*corpus, error) {
	pr.stage(`phrase "` + cfg.Phrase + `"`)
	conf, err := soundsDifferent(ctx, syn, cfg.Phrase, Confusables(cfg.Phrase))
	if err != nil {
		return nil, err
	}
	parts, err := soundsDifferent(ctx, syn, cfg.Phrase, Partials(cfg.Phrase))
	if err != nil {
		return nil, err
	}
	// The evaluation's confusables are never trained on.
	held := heldConfusables(cfg.Phrase)
	conf = slices.DeleteFunc(conf, func(c string) bool { return slices.Contains(held, c) })
	pr.stage(fmtList("confusables", conf))
	near := slices.Concat(conf, parts, InContext(cfg.Phrase))
	same, err := sameSounding(ctx, syn, cfg.Phrase, near, accents)
	if err != nil {
		return nil, err
	}
	var all []Delivery
	var spans [][2]int
	add := func(stream uint64, n int, voice func(*rand.Rand) Voice, text func(*rand.Rand, int) string) {
		r := rand.New(rand.NewPCG(cfg.Seed, stream))
		from := len(all)
		for i := range n {
			d := randomDelivery(r, voice(r), text(r, i))
			if !same[d.Voice.Accent+"|"+d.Text] {
				all = append(all, d)
			}
		}
		spans = append(spans, [2]int{from, len(all)})
	}
	phrase := func(*rand.Rand, int) string { return cfg.Phrase }
	other := func(r *rand.Rand, _ int) string { return speech(r, cfg.Phrase, false) }
	nearText := func(_ *rand.Rand, i int) string { return near[i%len(near)] }
	// Talk that holds a piece of the phrase ("the table robot", "hey can
	// you"): a room hears the phrase's words far more often than the
	// phrase.
	var leads, follows []string
	if _, _, ok := contextPieces(cfg.Phrase); ok && cfg.ContextUtterances > 0 {
		if leads, follows, err = contextWords(ctx, syn, cfg.Phrase, accents); err != nil {
			return nil, err
		}
	}
	nStream := cfg.SpeechStreams * cfg.StreamUtts
	add(10, cfg.PosUtterances, fitVoice, phrase)
	add(11, len(near)*cfg.NearReps, fitVoice, nearText)
	add(12, nStream, fitVoice, other)
	add(13, cfg.MineStreams*cfg.StreamUtts, fitVoice, func(r *rand.Rand, i int) string {
		if i%3 == 2 {
			return near[r.IntN(len(near))]
		}
		return speech(r, cfg.Phrase, false)
	})
	ctxN := 0
	if len(leads) > 0 {
		ctxN = cfg.ContextUtterances
	}
	add(17, ctxN, fitVoice, func(r *rand.Rand, _ int) string { return randomContext(r, cfg.Phrase, leads, follows) })
	add(14, cfg.ValPos, valVoice, phrase)
	add(15, cfg.ValStreams*cfg.StreamUtts, valVoice, func(r *rand.Rand, _ int) string { return speech(r, cfg.Phrase, true) })
	add(16, len(conf)*cfg.ValNear, valVoice, func(_ *rand.Rand, i int) string { return conf[i%len(conf)] })
	xs, err := syn.sayAll(ctx, all, cfg.Workers, pr.counter("synthesising", len(all)))
	if err != nil {
		return nil, err
	}
	get := func(k int) []utt {
		var out []utt
		for i := spans[k][0]; i < spans[k][1]; i++ {
			out = append(out, utt{x: xs[i], d: all[i]})
		}
		return out
	}
	return &corpus{pos: get(0), near: append(get(1), get(4)...), speech: get(2), mine: get(3), valPos: get(5), valSpeech: get(6), valNear: get(7)}, nil
}

// clipSets are the rendered clips of a run. end is the phrase's end
// sample in a phrase clip, -1 in a clip of negatives only.
type clipSets struct {
	train    [][]int16
	trainEnd []int
	nearFrom int // train[nearFrom:nearTo] are the near misses
	nearTo   int
	mine     [][]int16
	val      [][]int16
	valKind  []int
	valEnd   []int
}

const (
	valPos = iota
	valSpeech
	valNear
)

// render mixes the clips from the seed: each phrase utterance in PosClips
// rooms (three in ten after other speech), each near miss ending where a
// phrase would, streams of other speech, and noise alone. Each part draws
// from a random stream of its own, so the streams of other speech and the
// noise do not depend on the phrase or on the other parts' sizes: their
// embeddings are cached once and reused by every phrase trained with the
// same seed.
func (c *corpus) render(cfg Config) *clipSets {
	rng := func(part uint64) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, 30+part)) }
	var babble [][]int16
	for _, u := range c.speech {
		babble = append(babble, u.x)
	}
	s := &clipSets{}
	ending := func(r *rand.Rand, u utt) (scene, int) {
		sc := randomScene(r, clipLen)
		end := placeEnding(r, &sc, u.x)
		if r.IntN(10) < 3 && len(c.speech) > 0 {
			placeBefore(r, &sc, pick(r, c.speech).x, end-len(u.x))
		}
		return sc, end
	}
	var scenes []scene
	r := rng(0)
	for _, u := range c.pos {
		for range cfg.PosClips {
			sc, end := ending(r, u)
			scenes, s.trainEnd = append(scenes, sc), append(s.trainEnd, end)
		}
	}
	r = rng(1)
	s.nearFrom = len(scenes)
	for _, u := range c.near {
		sc, _ := ending(r, u)
		scenes, s.trainEnd = append(scenes, sc), append(s.trainEnd, -1)
	}
	s.nearTo = len(scenes)
	streams := func(r *rand.Rand, us []utt, n int) []scene {
		var out []scene
		for k := range n {
			var xs [][]int16
			for _, u := range us[min(len(us), k*cfg.StreamUtts):min(len(us), (k+1)*cfg.StreamUtts)] {
				xs = append(xs, u.x)
			}
			if len(xs) > 0 {
				out = append(out, stream(r, xs))
			}
		}
		return out
	}
	for _, sc := range streams(rng(2), c.speech, cfg.SpeechStreams) {
		scenes, s.trainEnd = append(scenes, sc), append(s.trainEnd, -1)
	}
	r = rng(3)
	for range cfg.NoiseClips {
		sc := randomScene(r, clipLen)
		sc.noise = pick(r, []string{"white", "pink", "babble"})
		scenes, s.trainEnd = append(scenes, sc), append(s.trainEnd, -1)
	}
	s.train = renderAll(scenes, babble, cfg.Workers)
	s.mine = renderAll(streams(rng(4), c.mine, cfg.MineStreams), babble, cfg.Workers)
	var vs []scene
	r = rng(5)
	for _, u := range c.valPos {
		sc, end := ending(r, u)
		vs, s.valKind, s.valEnd = append(vs, sc), append(s.valKind, valPos), append(s.valEnd, end)
	}
	r = rng(6)
	for _, u := range c.valNear {
		sc, end := ending(r, u)
		vs, s.valKind, s.valEnd = append(vs, sc), append(s.valKind, valNear), append(s.valEnd, end)
	}
	for _, sc := range streams(rng(7), c.valSpeech, cfg.ValStreams) {
		vs, s.valKind, s.valEnd = append(vs, sc), append(s.valKind, valSpeech), append(s.valEnd, -1)
	}
	s.val = renderAll(vs, babble, cfg.Workers)
	return s
}

func renderAll(scs []scene, babble [][]int16, workers int) [][]int16 {
	out := make([][]int16, len(scs))
	// Mixing takes seconds and has nothing to wait for: no context.
	_ = parallel(context.Background(), len(scs), workers, func(i int) { out[i] = scs[i].render(babble) })
	return out
}

// samples labels the training windows (see posAfter, ignoreBefore); a
// near miss's windows weigh nearWeight.
func (s *clipSets) samples(clips []embedded, nearWeight float32) (pos, neg []sample) {
	for i, em := range clips {
		end := s.trainEnd[i]
		w := float32(1)
		if i >= s.nearFrom && i < s.nearTo {
			w = nearWeight
		}
		for j := ww.WindowLen - 1; j < len(em.e); j++ {
			t := int(em.end[j])
			sm := sample{c: int32(i), j: int16(j), w: w}
			switch {
			case end < 0 || t < end-ignoreBefore:
				neg = append(neg, sm)
			case t >= end && t <= end+posAfter:
				sm.y = 1
				pos = append(pos, sm)
			}
		}
	}
	return pos, neg
}

func fmtList(what string, xs []string) string {
	s := what + ":"
	for i, x := range xs {
		if i > 0 {
			s += ","
		}
		s += " " + x
	}
	return s
}

// soundsDifferent drops candidates that espeak-ng pronounces exactly like
// the phrase: "hay robot" is "hey robot", and a negative that is the
// phrase would teach the model to miss it.
func soundsDifferent(ctx context.Context, syn *synth, phrase string, cands []string) ([]string, error) {
	same, err := sameSounding(ctx, syn, phrase, cands, []string{"en-us"})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(slices.Clone(cands), func(c string) bool { return same["en-us|"+c] }), nil
}

// sameSounding finds, for each of accents, the texts it pronounces
// exactly like the phrase; keys are accent+"|"+text.
func sameSounding(ctx context.Context, syn *synth, phrase string, texts, accents []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, a := range accents {
		ps, err := syn.phonemes(ctx, a, append([]string{phrase}, texts...))
		if err != nil {
			return nil, err
		}
		for i, p := range ps[1:] {
			if p == ps[0] {
				out[a+"|"+texts[i]] = true
			}
		}
	}
	return out, nil
}

// contextWords are the words randomContext may put right before the
// phrase's tail (leads) and right after its first word (follows): every
// word of the speech lists except those that, in one of accents, make the
// piece sound like the phrase ("hay robot" is "hey robot").
func contextWords(ctx context.Context, syn *synth, phrase string, accents []string) (leads, follows []string, err error) {
	head, tail, _ := contextPieces(phrase)
	var cands []string
	for _, w := range slices.Concat(words, strings.Fields(strings.Join(firstWords, " "))) {
		if !slices.Contains(cands, w) {
			cands = append(cands, w)
		}
	}
	var texts []string
	for _, w := range cands {
		texts = append(texts, w+" "+tail, head+" "+w)
	}
	same, err := sameSounding(ctx, syn, phrase, texts, accents)
	if err != nil {
		return nil, nil, err
	}
	bad := func(t string) bool {
		return slices.ContainsFunc(accents, func(a string) bool { return same[a+"|"+t] })
	}
	for _, w := range cands {
		if w != head && !bad(w+" "+tail) {
			leads = append(leads, w)
		}
		if w != strings.Fields(tail)[0] && !bad(head+" "+w) {
			follows = append(follows, w)
		}
	}
	if len(leads) == 0 || len(follows) == 0 {
		return nil, nil, fmt.Errorf("no word can stand beside the pieces of %q without sounding like it", phrase)
	}
	return leads, follows, nil
}
