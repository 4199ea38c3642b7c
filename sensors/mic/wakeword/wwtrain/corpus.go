package wwtrain

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// utt is one synthesised utterance.
type utt struct {
	x []int16
	d Delivery
}

// corpus is all the speech a training run uses, split by purpose. Training
// hears only training voices; the calibration and test sets are drawn
// with their own seeds, and the test positives come per voice group.
type corpus struct {
	pos, speech, near []utt // training: the phrase, other speech, confusables and partials
	calib             []utt // other speech for the threshold
	mine              []utt // speech (and near misses, if asked) by training voices, for hard negatives
	testPos           []utt // the phrase, per voice group
	testSpeech        []utt // other speech for FA/h
	testNear          []utt // confusables (not partials), for their fire rate
	engineNear        []utt // the confusables by the held-out engine's voices
	confusables       []string
	heldConfusables   map[string]bool // never trained on
	// Validation: the phrase by the validation speakers, training
	// sentences and trained confusables.
	valPos, valSpeech, valNear []utt
	// sameSound[accent+"|"+text]: the accent reads text as the phrase.
	sameSound map[string]bool
	// phones transcribes the phrase and the near misses (nil without a
	// phone head).
	phones *phoneSet
}

// utterances per minute of other speech (about 2.2 s each, plus pauses).
const uttPerMinute = 20

func buildCorpus(ctx context.Context, cfg Config, syn *synth, pr *progress) (*corpus, error) {
	pr.stage("phrase " + `"` + cfg.Phrase + `"`)
	conf, err := soundsDifferent(ctx, syn, cfg.Phrase, Confusables(cfg.Phrase))
	if err != nil {
		return nil, err
	}
	parts, err := soundsDifferent(ctx, syn, cfg.Phrase, Partials(cfg.Phrase))
	if err != nil {
		return nil, err
	}
	pr.stage(fmtList("confusables", conf))
	pr.stage(fmtList("partials", parts))

	var all []Delivery
	var spans [][2]int
	add := func(r *rand.Rand, n int, voice func(*rand.Rand) Voice, text func(*rand.Rand, int) string) {
		from := len(all)
		for i := 0; i < n; i++ {
			all = append(all, randomDelivery(r, voice(r), text(r, i)))
		}
		spans = append(spans, [2]int{from, len(all)})
	}
	phrase := func(*rand.Rand, int) string { return cfg.Phrase }
	other := func(r *rand.Rand, _ int) string { return speech(r, cfg.Phrase, false) }
	otherHeld := func(r *rand.Rand, _ int) string { return speech(r, cfg.Phrase, true) }
	// Every fourth confusable is never trained on: the report gives the
	// fire rate of those apart, as phrases a user may say that the
	// generator did not foresee.
	var trainConf []string
	for i, c := range conf {
		if i%4 != 3 {
			trainConf = append(trainConf, c)
		}
	}
	near := append(append(append([]string(nil), trainConf...), parts...), InContext(cfg.Phrase)...)
	r := func(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(cfg.Seed, stream)) }
	// flite swaps a share of voice's draws (Config.OtherEngines) for
	// flite's speakers, drawing on its own stream: the espeak-ng
	// deliveries stay those of a run without them, and so does the
	// cache.
	flite := func(stream uint64, voice func(*rand.Rand) Voice, speakers []string) func(*rand.Rand) Voice {
		if cfg.OtherEngines == 0 {
			return voice
		}
		o := r(100 + stream)
		return func(r *rand.Rand) Voice {
			v := voice(r)
			if o.Float64() < cfg.OtherEngines {
				return otherVoice(o, engineFlite, speakers)
			}
			return v
		}
	}
	fliteAll := slices.Concat(fliteTrain, fliteVal)
	fit := fitVoices(cfg.ExtraAccents)
	add(r(10), cfg.PosUtterances, flite(10, fit, fliteTrain), phrase)
	add(r(11), cfg.NegUtterances, flite(11, fit, fliteTrain), other)
	add(r(12), len(near)*cfg.ConfusableReps, flite(12, fit, fliteTrain), func(_ *rand.Rand, i int) string { return near[i%len(near)] })
	add(r(13), int(cfg.CalibMinutes*uttPerMinute), flite(13, anyVoice, fliteAll), otherHeld)
	groups := []func(*rand.Rand) Voice{trainVoice,
		func(r *rand.Rand) Voice { return Voice{pick(r, trainAccents), pick(r, heldVariants), ""} },
		func(r *rand.Rand) Voice {
			return Voice{pick(r, heldAccents), pick(r, append(append([]string(nil), trainVariants...), heldVariants...)), ""}
		}}
	tp := r(14)
	for _, g := range groups {
		add(tp, cfg.TestPosPerGroup, g, phrase)
	}
	add(r(15), int(cfg.TestNegMinutes*uttPerMinute), flite(15, anyVoice, fliteAll), otherHeld)
	halfHeldOut := func(r *rand.Rand) Voice {
		if r.IntN(2) == 0 {
			return heldVoice(r)
		}
		return trainVoice(r)
	}
	add(r(16), 2*len(conf), halfHeldOut, func(_ *rand.Rand, i int) string { return conf[i/2] })
	add(r(17), cfg.ValPosUtterances, valVoice, phrase)
	add(r(18), int(cfg.ValNegMinutes*uttPerMinute), func(r *rand.Rand) Voice {
		if r.IntN(2) == 0 {
			return valVoice(r)
		}
		return fitVoice(r)
	}, other)
	add(r(19), len(trainConf)*cfg.ValConfusableReps, valVoice, func(_ *rand.Rand, i int) string { return trainConf[i%len(trainConf)] })
	add(r(20), int(cfg.MineMinutes*uttPerMinute), flite(20, fit, fliteTrain), other)
	mineNear := 0
	if cfg.MineMinutes > 0 {
		mineNear = len(near) * cfg.MineNearReps
	}
	add(r(21), mineNear, flite(21, fit, fliteTrain), func(_ *rand.Rand, i int) string { return near[i%len(near)] })
	ctxN := 0
	var leads, follows []string
	if _, _, ok := contextPieces(cfg.Phrase); ok && cfg.ContextUtterances > 0 {
		if leads, follows, err = contextWords(ctx, syn, cfg.Phrase, slices.Concat(trainAccents, cfg.ExtraAccents)); err != nil {
			return nil, err
		}
		ctxN = cfg.ContextUtterances
	}
	add(r(22), ctxN, flite(22, fit, fliteTrain), func(r *rand.Rand, _ int) string { return randomContext(r, cfg.Phrase, leads, follows) })
	// More confusable clips for the test than the first two of each,
	// drawn apart so that those stay the same.
	add(r(23), max(0, cfg.TestConfusableReps-2)*len(conf), halfHeldOut, func(_ *rand.Rand, i int) string { return conf[i%len(conf)] })
	// festival's voices, an engine training never hears: the phrase as
	// a test group of its own, and the confusables apart.
	festival := func(r *rand.Rand) Voice { return otherVoice(r, engineFestival, festivalVoice) }
	add(r(24), cfg.TestPosPerGroup, festival, phrase)
	add(r(25), max(2, cfg.TestConfusableReps)*len(conf), festival, func(_ *rand.Rand, i int) string { return conf[i%len(conf)] })
	// flite's validation speaker, whatever the share: recipes with and
	// without flite compare on the same clips.
	fliteV := func(r *rand.Rand) Voice { return otherVoice(r, engineFlite, fliteVal) }
	add(r(26), cfg.ValPosUtterances, fliteV, phrase)
	add(r(27), len(trainConf)*cfg.ValConfusableReps, fliteV, func(_ *rand.Rand, i int) string { return trainConf[i%len(trainConf)] })

	same, err := sameSounding(ctx, syn, cfg.Phrase, conf, slices.Concat(trainAccents, heldAccents, cfg.ExtraAccents))
	if err != nil {
		return nil, err
	}
	// drop leaves out of span k what its accent says as the phrase.
	drop := func(k int) int {
		s := spans[k]
		kept := all[:s[0]:s[0]]
		for _, d := range all[s[0]:s[1]] {
			if !same[d.Voice.Accent+"|"+d.Text] {
				kept = append(kept, d)
			}
		}
		n := s[1] - s[0] - (len(kept) - s[0])
		all = append(kept, all[s[1]:]...)
		spans[k][1] -= n
		for j := k + 1; j < len(spans); j++ {
			spans[j][0] -= n
			spans[j][1] -= n
		}
		return n
	}
	if cfg.DropSameSound {
		pr.stage(fmt.Sprintf("%d confusable utterances left out: their accent says them as the phrase", drop(2)))
	}
	// Mining always leaves them out: mined, they would be the phrase
	// trained as a negative.
	drop(13)

	if err := checkEngines(all); err != nil {
		return nil, err
	}
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
	c := &corpus{pos: get(0), speech: get(1), near: append(get(2), get(14)...), calib: get(3),
		testSpeech: get(7), testNear: append(get(8), get(15)...), confusables: conf, heldConfusables: map[string]bool{},
		valPos: append(get(9), get(18)...), valSpeech: get(10), valNear: append(get(11), get(19)...), mine: append(get(12), get(13)...), sameSound: same}
	for i, t := range conf {
		if i%4 == 3 {
			c.heldConfusables[t] = true
		}
	}
	for _, g := range []int{4, 5, 6, 16} {
		c.testPos = append(c.testPos, get(g)...)
	}
	c.engineNear = get(17)
	if cfg.PhoneWeight > 0 {
		texts := phoneTexts(c.pos, c.near)
		for _, a := range trainAccents { // for the phone check's rivals
			texts[a] = append(append(texts[a], cfg.Phrase), conf...)
		}
		if c.phones, err = transcribe(ctx, syn, texts); err != nil {
			return nil, err
		}
	}
	return c, nil
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

// trainingSet mixes the training clips: each positive utterance in
// PosClips scenes, every other utterance once, and noise alone. Scenes are
// drawn in order from the seed; rendering runs in parallel into fixed
// slots.
func (c *corpus) trainingSet(cfg Config, pr *progress) *dataset {
	r := rand.New(rand.NewPCG(cfg.Seed, 3))
	type job struct {
		sc  scene
		end int
		ph  phoneTarget
	}
	var jobs []job
	// spelt is the phone target of u ending at sample end, if it has one.
	spelt := func(u utt, end int) phoneTarget {
		if c.phones == nil {
			return phoneTarget{}
		}
		tg, _ := wholeUtterance(end-len(u.x), end, c.phones.text[u.d.Voice.Accent+"|"+u.d.Text])
		return tg
	}
	before := func(sc *scene, end int) {
		if r.IntN(10) < 3 { // other speech before it
			placeBefore(r, sc, pick(r, c.speech).x, end-len(sc.parts[0].x))
		}
	}
	for _, u := range c.pos {
		for range cfg.PosClips {
			sc := randomScene(r)
			end := placeEnding(r, &sc, u.x)
			before(&sc, end)
			jobs = append(jobs, job{sc, end, spelt(u, end)})
		}
	}
	// The near misses are where the model must be sharpest, and cost
	// nothing to hear again in another room: NearClips scenes each.
	for k, set := range [][]utt{c.speech, c.near} {
		reps := 1
		if k == 1 {
			reps = max(1, cfg.NearClips)
		}
		for _, u := range set {
			for range reps {
				sc := randomScene(r)
				end := placeEnding(r, &sc, u.x)
				before(&sc, end)
				jobs = append(jobs, job{sc, -1, spelt(u, end)})
			}
		}
	}
	for range cfg.NoiseClips {
		sc := randomScene(r)
		sc.noise = pick(r, []string{"white", "pink", "babble"})
		jobs = append(jobs, job{sc: sc, end: -1})
	}
	babble := make([][]int16, len(c.speech))
	for i, u := range c.speech {
		babble[i] = u.x
	}
	ds := newDataset(len(jobs), cfg.minedClips())
	ds.floor = float32(cfg.LogMelFloor)
	ds.quietAfter = cfg.IgnoreAfter
	if c.phones != nil {
		ds.phones = c.phones.size()
		ds.ph = make([]phoneTarget, len(jobs))
		for i, j := range jobs {
			ds.ph[i] = j.ph
		}
	}
	tick := pr.counter("mixing clips", len(jobs))
	// Mixing has no context to stop it: it takes seconds.
	_ = parallel(context.Background(), len(jobs), cfg.Workers, func(i int) {
		ds.set(i, jobs[i].sc, babble, jobs[i].end)
		tick()
	})
	ds.npos = len(c.pos) * cfg.PosClips
	ds.near[0] = ds.npos + len(c.speech)
	ds.near[1] = ds.near[0] + len(c.near)*max(1, cfg.NearClips)
	return ds
}
