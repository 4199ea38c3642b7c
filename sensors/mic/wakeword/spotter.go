package wakeword

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/vad"
)

// Options tune a Spotter. Zero values take the defaults.
type Options struct {
	// Threshold on the score (1: as close as the takes are to each other;
	// 0: as far as a take played backwards). Default DefaultThreshold.
	Threshold float64
	// Refractory period after a detection, during which the same phrase
	// (or its echo) cannot fire again. Default 1.5 s.
	Refractory time.Duration
	// VAD options for the gate and for utterance ends.
	VAD vad.Options
	// Heads are trained, speaker-independent detectors over Frontend
	// (which the Spotter owns), run while the VAD hears sound (Heads).
	Heads    []*Head
	Frontend Frontend
	// HeadThreshold overrides the heads' own thresholds (0: each head's,
	// chosen by its trainer).
	HeadThreshold float64
}

// DefaultThreshold was chosen on the synthetic benchmark corpus (see
// docs/bench/wake-word.md), with margin for real voices, which vary more than a
// speech synthesiser. Check it on your own recordings with
// `edgeagent wakeword test`.
const DefaultThreshold = 0.8

// DefaultRefractory is how long after a detection the same phrase is not
// reported again, unless Options say otherwise.
const DefaultRefractory = 1500 * time.Millisecond

func (o *Options) fill() error {
	if o.Threshold == 0 {
		o.Threshold = DefaultThreshold
	}
	if o.Threshold < 0 || o.Threshold > 1 {
		return fmt.Errorf("wake word threshold %v outside 0..1", o.Threshold)
	}
	if o.HeadThreshold < 0 || o.HeadThreshold >= 1 {
		return fmt.Errorf("wake word model threshold %v outside 0..1", o.HeadThreshold)
	}
	if len(o.Heads) > 0 && o.Frontend == nil {
		return errors.New("wake word heads need a frontend")
	}
	if o.Refractory == 0 {
		o.Refractory = DefaultRefractory
	}
	return nil
}

// Detection is one wake word found in the stream. Times are offsets from
// the first sample the Spotter saw.
type Detection struct {
	Name       string
	Score      float64
	Start, End time.Duration // the matched phrase
	At         time.Duration // when the decision was made (End + settling)
	SNR        float64       // SNR of the bank variant that matched, dB (+Inf: clean; NaN: a trained model fired)
	Detector   string        // DetectorModel or DetectorTemplates
}

// What found a Detection.
const (
	DetectorModel     = "model"     // a trained Head
	DetectorTemplates = "templates" // the enrolled takes (DTW)
)

const (
	preRollHops = 30  // features kept while the gate is shut (300 ms): the VAD confirms speech late
	settleHops  = 5   // a peak must hold 50 ms before it fires: the best end of the match is its last frame
	noiseHops   = 100 // background kept for the bank (1 s)
	quietHops   = 30  // silence needed before hops count as background
	// The bank is rebuilt when the background level moved by rebuildDB, or
	// every rebuildEvery anyway (its colour may change at the same level).
	rebuildDB     = 3.0
	rebuildEvery  = 30 * time.Second
	firstBuild    = 50 // hops of background before the first noisy bank
	settleVADHops = 200
)

type entry struct {
	model    *Model
	variants []variant
	ms       [][]*matcher // [variant][take]
}

// Spotter finds wake words in a 16 kHz mono stream. A VAD keeps both
// detectors idle in silence: trained heads run over the frontend while
// there is sound (Heads); for enrolled templates, the VAD also collects
// the background the templates are re-mixed with, and streaming DTW runs
// against every take and bank variant while the gate is open. Not safe
// for concurrent use.
type Spotter struct {
	o       Options
	entries []*entry
	vad     *vad.VAD
	ext     *extractor

	pending []int16 // samples of an incomplete hop
	hop     int64   // hops processed

	feat    [preRollHops][Dims]float32 // ring of recent features
	nFeat   int                        // valid entries in the ring since the gate last reset
	gate    bool
	silence int   // consecutive non-speech hops
	j       int32 // frame index within the current gate session
	gateHop int64 // stream hop of frame 0 of the session

	armed     bool
	peak      Detection
	sincePeak int
	quietTill int64 // refractory: no detections before this hop

	run        []int16 // current contiguous run of background, up to noiseHops
	noise      []int16 // the latest run long enough to use
	builtDB    float64
	builtAtHop int64
	built      bool

	heads *Heads // nil without trained heads
}

// NewSpotter makes a spotter for the enrolled models and the trained
// o.Heads (neither: VAD only).
func NewSpotter(models []*Model, o Options) (*Spotter, error) {
	if err := o.fill(); err != nil {
		return nil, err
	}
	s := &Spotter{o: o, vad: vad.New(o.VAD), ext: newExtractor(),
		run: make([]int16, 0, noiseHops*HopSamples)}
	for _, m := range models {
		if len(m.Takes) < MinTakes {
			return nil, fmt.Errorf("wake word %q has %d takes, need %d", m.Name, len(m.Takes), MinTakes)
		}
		e := &entry{model: m}
		s.entries = append(s.entries, e)
	}
	if len(o.Heads) > 0 {
		s.heads = NewHeads(o.Heads, o.Frontend, HeadOptions{Threshold: o.HeadThreshold, Refractory: o.Refractory})
	}
	s.rebuild(nil)
	return s, nil
}

// Threshold is the score threshold in use.
func (s *Spotter) Threshold() float64 { return s.o.Threshold }

// HeadThreshold is the threshold head i (in the order of Options.Heads)
// uses.
func (s *Spotter) HeadThreshold(i int) float64 { return s.heads.entries[i].pick.Threshold }

func (s *Spotter) rebuild(noise []int16) {
	for _, e := range s.entries {
		e.variants = buildVariants(e.model, noise)
		e.ms = make([][]*matcher, len(e.variants))
		for v := range e.variants {
			for _, t := range e.variants[v].tmpls {
				e.ms[v] = append(e.ms[v], newMatcher(t))
			}
		}
	}
}

// Speech reports the VAD state after the last processed hop.
func (s *Spotter) Speech() bool { return s.vad.Speech() }

// NoiseFloorDBFS is the VAD's current background estimate.
func (s *Spotter) NoiseFloorDBFS() float64 { return s.vad.FloorDBFS() }

// Elapsed is the stream time processed so far.
func (s *Spotter) Elapsed() time.Duration { return hopTime(s.hop) }

func hopTime(h int64) time.Duration { return time.Duration(h) * 10 * time.Millisecond }

// Hops is d in 10 ms hops, rounded down.
func Hops(d time.Duration) int64 { return int64(d / (10 * time.Millisecond)) }

// Process consumes samples and appends any detections to dst. onHop, when
// not nil, is called after each 10 ms hop with the VAD state, for callers
// that need the speech/silence timeline (utterance capture).
func (s *Spotter) Process(dst []Detection, samples []int16, onHop func(speech bool)) []Detection {
	if len(s.pending) > 0 {
		need := HopSamples - len(s.pending)
		if len(samples) < need {
			s.pending = append(s.pending, samples...)
			return dst
		}
		s.pending = append(s.pending, samples[:need]...)
		samples = samples[need:]
		dst = s.processHop(dst, s.pending)
		if onHop != nil {
			onHop(s.vad.Speech())
		}
		s.pending = s.pending[:0]
	}
	for len(samples) >= HopSamples {
		dst = s.processHop(dst, samples[:HopSamples])
		if onHop != nil {
			onHop(s.vad.Speech())
		}
		samples = samples[HopSamples:]
	}
	s.pending = append(s.pending, samples...)
	return dst
}

func (s *Spotter) processHop(dst []Detection, hop []int16) []Detection {
	speech := s.vad.Process(hop)
	slot := int(s.hop % preRollHops)
	if len(s.entries) > 0 { // the MFCCs are the templates' alone
		s.ext.push(hop, s.feat[slot][:])
	}
	s.hop++
	if s.nFeat < preRollHops {
		s.nFeat++
	}
	if speech {
		s.silence = 0
	} else {
		s.silence++
	}

	if s.heads != nil {
		n := len(dst)
		dst = s.heads.step(dst, hop, speech)
		if len(dst) > n { // one phrase, one detection: the templates start over
			s.quiet(s.hop)
			s.resetMatchers()
			s.armed = false
		}
	}
	if len(s.entries) == 0 {
		return dst
	}

	if !s.gate {
		// Background for the bank: only hops well into a pause and at
		// the floor (soft speech in loud noise does not wake the VAD), and
		// not before the VAD has seen a whole floor window (a stream that
		// opens with speech would teach it speech as noise).
		if s.silence >= quietHops && s.hop > settleVADHops &&
			s.vad.LevelDBFS() < s.vad.FloorDBFS()+4 {
			s.collectNoise(hop)
		} else {
			s.breakNoiseRun()
		}
		if !speech {
			return dst
		}
		// Open: replay the pre-roll so the phrase's first syllable,
		// spoken before the VAD was sure, is matched too.
		s.gate = true
		s.j = 0
		s.gateHop = s.hop - int64(s.nFeat)
		for k := s.nFeat - 1; k >= 0; k-- {
			idx := int((s.hop - 1 - int64(k)) % preRollHops)
			dst = s.match(dst, s.feat[idx][:])
		}
		return dst
	}
	dst = s.match(dst, s.feat[slot][:])
	// The VAD's own hangover already bridges gaps between words; close a
	// little later still so a phrase-final stop consonant is matched.
	if s.silence > 10 {
		dst = s.flush(dst)
		s.closeGate()
	}
	return dst
}

func (s *Spotter) closeGate() {
	s.gate = false
	s.nFeat = 0
	s.resetMatchers()
	s.maybeRebuild()
}

// match feeds one feature frame to every matcher and runs peak picking.
func (s *Spotter) match(dst []Detection, x []float32) []Detection {
	j := s.j
	s.j++
	end := s.gateHop + int64(j) + 1 // stream hop count at this frame's end
	best := Detection{Score: math.Inf(-1)}
	for _, e := range s.entries {
		for v := range e.variants {
			va := &e.variants[v]
			for _, m := range e.ms[v] {
				d, st := m.step(x, j)
				if math.IsInf(d, 1) {
					continue
				}
				if sc := va.score(d); sc > best.Score {
					best = Detection{
						Name: e.model.Name, Score: sc, SNR: va.snr,
						Start: hopTime(s.gateHop + int64(st)), End: hopTime(end),
					}
				}
			}
		}
	}
	if end < s.quietTill {
		return dst
	}
	if best.Score >= s.o.Threshold {
		if !s.armed || best.Score > s.peak.Score {
			s.peak, s.armed, s.sincePeak = best, true, 0
			return dst
		}
	}
	if s.armed {
		s.sincePeak++
		if s.sincePeak >= settleHops {
			dst = s.fire(dst, end)
		}
	}
	return dst
}

func (s *Spotter) flush(dst []Detection) []Detection {
	if s.armed {
		dst = s.fire(dst, s.hop)
	}
	return dst
}

func (s *Spotter) fire(dst []Detection, now int64) []Detection {
	d := s.peak
	d.Score = math.Min(1, d.Score)
	d.At = hopTime(now)
	d.Detector = DetectorTemplates
	s.armed = false
	// Partial matches overlapping the phrase just detected (or just
	// refused) must not fire again.
	s.resetMatchers()
	if s.heads != nil && !s.heads.assisted(d.Name, s.hop) {
		return dst
	}
	s.quiet(now)
	return append(dst, d)
}

func (s *Spotter) resetMatchers() {
	for _, e := range s.entries {
		for _, vm := range e.ms {
			for _, m := range vm {
				m.reset()
			}
		}
	}
}

// quiet starts the refractory period after a detection, for every
// detector: one phrase gives one detection.
func (s *Spotter) quiet(now int64) {
	s.quietTill = now + Hops(s.o.Refractory)
	if s.heads != nil {
		s.heads.quiet(s.quietTill)
	}
}

// collectNoise extends the current run of background hops. Only
// contiguous runs are used: joining hops from different pauses would put a
// click at every joint, and clicks are broadband where pink noise is not.
func (s *Spotter) collectNoise(hop []int16) {
	if len(s.run) == cap(s.run) {
		s.run = s.run[:copy(s.run, s.run[HopSamples:])]
	}
	s.run = append(s.run, hop...)
	if len(s.run) >= firstBuild*HopSamples {
		s.noise = append(s.noise[:0], s.run...)
		if !s.built {
			s.maybeRebuild()
		}
	}
}

func (s *Spotter) breakNoiseRun() { s.run = s.run[:0] }

// maybeRebuild re-mixes the bank when the background has changed. It runs
// only while the gate is shut, so matchers are never swapped mid-phrase.
func (s *Spotter) maybeRebuild() {
	if len(s.noise) == 0 {
		return
	}
	db := audio.DBFS(audio.RMS(s.noise))
	if s.built && math.Abs(db-s.builtDB) < rebuildDB && hopTime(s.hop-s.builtAtHop) < rebuildEvery {
		return
	}
	s.rebuild(s.noise)
	s.built, s.builtDB, s.builtAtHop = true, db, s.hop
}
