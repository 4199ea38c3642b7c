package wwtrain

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// Evaluation runs the model exactly as the mic does (wakeword.Spotter, its
// front end, its picker and refractory period) over audio it never trained
// on, records the score of every hop once, and replays the picker over
// those traces for any threshold.

// condition is a noise condition of the evaluation.
type condition struct {
	Noise string  `json:"noise"` // "" clean, white, pink, babble
	SNR   float64 `json:"snr_db"`
}

func (c condition) String() string {
	if c.Noise == "" {
		return "clean"
	}
	return c.Noise + " " + itoa(int(c.SNR)) + " dB"
}

var (
	posConditions = []condition{{"", 0}, {"pink", 20}, {"pink", 10}, {"pink", 5}, {"babble", 10}, {"white", 10}}
	negConditions = []condition{{"", 0}, {"pink", 20}, {"pink", 10}, {"white", 10}, {"babble", 10}, {"pink", 5}}
)

// refractHops is the mic's default refractory period, in hops.
var refractHops = wakeword.Hops(wakeword.DefaultRefractory)

// clip is one evaluation stream with where its phrase is (hops; -1: none).
// Its audio is rendered when it is scored, not kept: eight hours of
// calibration speech are 0.9 GB of samples.
type clip struct {
	sc         scene
	babble     [][]int16
	start, end int
	cond       condition
	texts      []spoken // what is said when, for streams of speech
}

// audio renders the clip (the same samples every time).
func (c clip) audio() []int16 { return c.sc.render(c.babble) }

type spoken struct {
	from  int // hop where it starts
	text  string
	voice Voice
}

// said describes what was being said at hop h (the utterance ending
// last before it, or during it).
func (c clip) said(h int) string {
	best := -1
	for i, s := range c.texts {
		if s.from <= h {
			best = i
		}
	}
	if best < 0 {
		return c.cond.String() + ": (before any speech)"
	}
	s := c.texts[best]
	return fmt.Sprintf("%s: %q (%s)", c.cond, s.text, s.voice)
}

// scoreTraces runs n as the detector does over each clip and records its
// uncalibrated score at every hop (thresholds are chosen on those).
func scoreTraces(ctx context.Context, n *wakeword.Net, clips []clip, workers int, tick func()) ([][]float32, error) {
	raw := *n
	raw.Offset = 0
	out := make([][]float32, len(clips))
	errs := make([]error, len(clips))
	err := parallel(ctx, len(clips), workers, func(i int) {
		sp, err := wakeword.NewSpotter(nil, wakeword.Options{Nets: []*wakeword.Net{&raw}})
		if err != nil {
			errs[i] = err
			return
		}
		x := clips[i].audio()
		tr := make([]float32, 0, len(x)/wakeword.HopSamples)
		sp.Process(nil, x, func(bool) { tr = append(tr, float32(sp.NetScore(0))) })
		out[i] = tr
		tick()
	})
	if err != nil {
		return nil, err
	}
	for _, err := range errs { // every clip fails alike: the model's error, once
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fires replays the picker over a trace: the hops where it fired and the
// hops of their peaks.
func fires(tr []float32, th float64, k int) (at, peaks []int) {
	p := wakeword.NewPicker(th, refractHops)
	p.Smooth = k
	for h, s := range tr {
		if ok, _, pk := p.Step(int64(h), float64(s)); ok {
			at = append(at, h)
			peaks = append(peaks, int(pk))
		}
	}
	return at, peaks
}

// hitIn is the hop at which the picker detects the clip's phrase (its
// peak within the phrase or up to a second after it), or -1.
func hitIn(tr []float32, th float64, k int, c clip) int {
	at, peaks := fires(tr, th, k)
	for j := range at {
		if peaks[j] >= c.start-10 && peaks[j] <= c.end+100 {
			return at[j]
		}
	}
	return -1
}

func countFires(trs [][]float32, th float64, k int) int {
	n := 0
	for _, t := range trs {
		a, _ := fires(t, th, k)
		n += len(a)
	}
	return n
}

// pickThreshold is the lowest threshold (on the uncalibrated score) at
// which the negatives fire at most allowed times.
func pickThreshold(trs [][]float32, allowed, k int) float64 {
	lo, hi := 0.0, 1.0
	if countFires(trs, hi, k) > allowed {
		return hi
	}
	for range 40 {
		mid := (lo + hi) / 2
		if countFires(trs, mid, k) > allowed {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}

// phraseClip puts an utterance 1.5 s into a stream with 1 s after it.
func phraseClip(u []int16, c condition, seed uint64, babble [][]int16) clip {
	r := rand.New(rand.NewPCG(seed, 4))
	lead := 24000
	sc := scene{length: lead + len(u) + 16000, noise: c.Noise, snr: c.SNR, peak: -24 + 18*r.Float64(), seed: seed,
		parts: []placed{{x: u, at: lead}}}
	return clip{sc: sc, babble: babble, start: lead / wakeword.HopSamples, end: (lead + len(u)) / wakeword.HopSamples}
}

// speechStreams joins utterances with pauses into minute-long streams,
// each under one condition, cycling through conds.
func speechStreams(us []utt, conds []condition, seed uint64, babble [][]int16) []clip {
	r := rand.New(rand.NewPCG(seed, 5))
	var out []clip
	for i := 0; i < len(us); {
		sc := scene{noise: "", peak: -24 + 18*r.Float64(), seed: r.Uint64()}
		c := conds[len(out)%len(conds)]
		sc.noise, sc.snr = c.Noise, c.SNR
		at := 8000 + r.IntN(16000)
		var texts []spoken
		for ; i < len(us) && at < 60*16000; i++ {
			sc.parts = append(sc.parts, placed{x: us[i].x, at: at})
			texts = append(texts, spoken{from: at / wakeword.HopSamples,
				text: us[i].d.Text, voice: us[i].d.Voice})
			at += len(us[i].x) + 4800 + r.IntN(19200) // 0.3–1.5 s pause
		}
		sc.length = at
		out = append(out, clip{sc: sc, babble: babble, start: -1, end: -1, cond: c, texts: texts})
	}
	return out
}

func hours(cs []clip) float64 {
	var n int
	for _, c := range cs {
		n += c.sc.length
	}
	return float64(n) / 16000 / 3600
}

func evaluate(ctx context.Context, cfg Config, n *wakeword.Net, c *corpus, pr *progress) (Report, error) {
	rep := Report{Phrase: cfg.Phrase, TargetFAPerHour: cfg.TargetFAPerHour}
	babbleOf := func(us []utt) [][]int16 {
		var b [][]int16
		for _, u := range us {
			b = append(b, u.x)
		}
		return b
	}
	calibBabble, testBabble := babbleOf(c.calib), babbleOf(c.testSpeech)
	calib := speechStreams(c.calib, negConditions, cfg.Seed+100, calibBabble)
	var posClips []clip
	var posMeta []struct {
		group string
		cond  condition
	}
	for i, u := range c.testPos {
		for j, cd := range posConditions {
			posClips = append(posClips, phraseClip(u.x, cd, cfg.Seed*7919+uint64(i*len(posConditions)+j), testBabble))
			posMeta = append(posMeta, struct {
				group string
				cond  condition
			}{u.d.Voice.Group(), cd})
		}
	}
	negClips := speechStreams(c.testSpeech, negConditions, cfg.Seed+200, testBabble)
	var nearClips []clip
	for i, u := range slices.Concat(c.testNear, c.engineNear) {
		cd := condition{}
		if i%2 == 1 {
			cd = condition{"pink", 10}
		}
		nearClips = append(nearClips, phraseClip(u.x, cd, cfg.Seed*104729+uint64(i), testBabble))
	}
	if cfg.SkipTest {
		posClips, posMeta, negClips, nearClips = nil, nil, nil, nil
	}
	val := newValSet(cfg.Seed, c)
	// Uncalibrated scores: the threshold is chosen on them.
	all := slices.Concat(calib, posClips, negClips, nearClips, val.clips())
	trs, err := scoreTraces(ctx, n, all, cfg.Workers, pr.counter("evaluating", len(all)))
	if err != nil {
		return rep, err
	}
	calTr := trs[:len(calib)]
	posTr := trs[len(calib) : len(calib)+len(posClips)]
	negTr := trs[len(calib)+len(posClips) : len(calib)+len(posClips)+len(negClips)]
	nearTr := trs[len(calib)+len(posClips)+len(negClips) : len(calib)+len(posClips)+len(negClips)+len(nearClips)]
	nearTr, engineNearTr := nearTr[:min(len(nearTr), len(c.testNear))], nearTr[min(len(nearTr), len(c.testNear)):]
	val.take(trs[len(calib)+len(posClips)+len(negClips)+len(nearClips):])

	rep.CalibHours = round3(hours(calib))
	rep.CalibTargetFAPerHour = cfg.TargetFAPerHour / cfg.calibMargin()
	allowed := int(math.Floor(rep.CalibTargetFAPerHour * rep.CalibHours))
	k := n.SmoothHops()
	th := pickThreshold(calTr, allowed, k)
	rep.RawThreshold = th
	rep.CalibFA = countFires(calTr, th, k)
	th = math.Min(th, 1-1e-6)
	n.Offset = float32(math.Log(th / (1 - th)))
	rep.Validation = val.report(th, calTr, k, allowed)
	rep.CalibTop = topPeaks(calTr, calib, 8, k)
	if cfg.SkipTest {
		return rep, nil
	}

	rep.TestNegHours = round3(hours(negClips))
	// One replay of each test trace: the total, what was said, and the row
	// of its noise condition.
	rep.FAByCondition = make([]FARow, len(negConditions))
	for j, cd := range negConditions {
		rep.FAByCondition[j].Condition = cd.String()
	}
	for i, tr := range negTr {
		a, peaks := fires(tr, th, k)
		rep.TestFA += len(a)
		for _, pk := range peaks {
			rep.FalseAccepts = append(rep.FalseAccepts, negClips[i].said(pk))
		}
		if j := slices.Index(negConditions, negClips[i].cond); j >= 0 {
			rep.FAByCondition[j].Hours += hours(negClips[i : i+1])
			rep.FAByCondition[j].FA += len(a)
		}
	}
	for j := range rep.FAByCondition {
		rep.FAByCondition[j].Hours = round3(rep.FAByCondition[j].Hours)
	}
	rep.FAPerHour = round3(float64(rep.TestFA) / math.Max(rep.TestNegHours, 1e-9))

	// The trade-off around the chosen threshold: what lower and higher
	// thresholds would give on the same test data.
	for _, q := range []float64{0.5, 0.8, 0.9, 0.95, th, 0.98, 0.99, 0.995, 0.998} {
		pt := CurvePoint{RawThreshold: q, FAPerHour: round3(float64(countFires(negTr, q, k)) / math.Max(rep.TestNegHours, 1e-9))}
		var hits, n int
		for i, tr := range posTr {
			if g := posMeta[i].group; g == GroupSeen || g == GroupNewEngine || posMeta[i].cond != (condition{"pink", 10}) {
				continue
			}
			n++
			if hitIn(tr, q, k, posClips[i]) >= 0 {
				hits++
			}
		}
		pt.RecallHeldOut10dB = round3(float64(hits) / float64(max(1, n)))
		var cf int
		for _, tr := range nearTr {
			if at, _ := fires(tr, q, k); len(at) > 0 {
				cf++
			}
		}
		pt.ConfusableRate = round3(float64(cf) / float64(max(1, len(nearTr))))
		rep.Curve = append(rep.Curve, pt)
	}
	sort.Slice(rep.Curve, func(i, j int) bool { return rep.Curve[i].RawThreshold < rep.Curve[j].RawThreshold })

	type key struct{ g, c string }
	rows := map[key]*RecallRow{}
	var keys []key
	for i, tr := range posTr {
		m := posMeta[i]
		kk := key{m.group, m.cond.String()}
		row := rows[kk]
		if row == nil {
			row = &RecallRow{Group: m.group, Condition: kk.c}
			rows[kk] = row
			keys = append(keys, kk)
		}
		row.add(hitIn(tr, th, k, posClips[i]), posClips[i].end)
	}
	for _, kk := range keys {
		row := rows[kk]
		row.finish()
		rep.Recall = append(rep.Recall, *row)
	}
	fired := map[string][2]int{}
	for i, tr := range nearTr {
		t := c.testNear[i].d.Text
		if c.sameSound[c.testNear[i].d.Voice.Accent+"|"+t] {
			rep.ConfusableSameSound++
		}
		f := fired[t]
		f[0]++
		if at, _ := fires(tr, th, k); len(at) > 0 {
			f[1]++
			rep.ConfusableFired++
		}
		fired[t] = f
	}
	rep.ConfusableN = len(nearTr)
	for _, t := range c.confusables {
		if f := fired[t]; f[0] > 0 {
			held := c.heldConfusables[t]
			rep.Confusables = append(rep.Confusables, ConfusableRow{Text: t, N: f[0], Fired: f[1], HeldOut: held})
			if held {
				rep.HeldConfusableN += f[0]
				rep.HeldConfusableFired += f[1]
			}
		}
	}
	if rep.ConfusableN > 0 {
		rep.ConfusableRate = round3(float64(rep.ConfusableFired) / float64(rep.ConfusableN))
	}
	rep.EngineConfusableN = len(engineNearTr)
	for _, tr := range engineNearTr {
		if at, _ := fires(tr, th, k); len(at) > 0 {
			rep.EngineConfusableFired++
		}
	}
	return rep, nil
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// topPeaks lists the n highest detections in the traces (at a low
// threshold), best first, with what was being said: the negatives that
// decide the threshold.
func topPeaks(trs [][]float32, clips []clip, n, k int) []string {
	type hit struct {
		score float64
		what  string
	}
	var hits []hit
	for i, tr := range trs {
		p := wakeword.NewPicker(0.3, refractHops)
		p.Smooth = k
		for h, s := range tr {
			if ok, sc, pk := p.Step(int64(h), float64(s)); ok {
				hits = append(hits, hit{sc, clips[i].said(int(pk))})
			}
		}
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	var out []string
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, fmt.Sprintf("%.4f %s", h.score, h.what))
	}
	return out
}
