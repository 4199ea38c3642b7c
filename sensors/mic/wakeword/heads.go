package wakeword

import (
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/vad"
)

// Heads runs trained heads over a frontend, and runs the frontend only
// while there is sound: the embedding network costs tens of times more
// than the VAD, and a quiet room is most of a robot's day.
//
// While the gate is shut, the last PreRoll of audio is kept. When the VAD
// hears sound, the frontend starts afresh on that pre-roll, so the window
// that ends with the phrase holds the whole phrase and the second of sound
// before it, as every training clip did (the VAD confirms an onset tens of
// milliseconds late, and the window reaches 1.28 s back plus the
// frontend's own context). The gate shuts closeHops after the VAD's last
// speech.
//
// Scores are picked in 10 ms hop numbers: a head scores once per
// embedding (every 8 hops), and the first window at or above the
// threshold fires at once. A head's score is a probability, not a
// distance with a best alignment to wait for; waiting for the peak cost
// up to 400 ms of latency on flite's and festival's voices (the budget is
// 300 ms), and the refractory period keeps one phrase one detection.
type Heads struct {
	fe      Frontend
	entries []*headEntry
	vad     *vad.VAD
	pending []int16 // samples of an incomplete hop
	ring    []int16 // the last PreRoll samples, circular
	ringAt  int     // next write position
	ringN   int     // valid samples
	open    bool
	silence int // hops since the VAD last heard speech
	hop     int64
	embs    []Embedding
	win     [WindowLen]Embedding // circular, oldest at win[nwin%WindowLen] once full
	nwin    int
	x       []float32
}

type headEntry struct {
	h    *Head
	sc   *headScratch
	pick picker
}

// HeadOptions tune Heads. Zero values take the defaults.
type HeadOptions struct {
	// Threshold overrides every head's own (0: each head's trained one).
	Threshold float64
	// Refractory after a detection. Default DefaultRefractory.
	Refractory time.Duration
	// VAD options for the gate and for the speech timeline Process reports.
	VAD vad.Options
}

const (
	// PreRoll is the audio replayed into the frontend when the gate
	// opens: the window (1.28 s) plus the frontend's context (0.76 s).
	PreRoll     = 2 * time.Second
	headPreRoll = int(PreRoll / (10 * time.Millisecond))
	closeHops   = 30 // 300 ms past the VAD's own hangover
)

// NewHeads makes a detector for heads over fe (which it owns and resets).
// Without heads (fe may then be nil) it is the VAD alone.
func NewHeads(heads []*Head, fe Frontend, o HeadOptions) *Heads {
	if o.Refractory == 0 {
		o.Refractory = DefaultRefractory
	}
	d := &Heads{fe: fe, vad: vad.New(o.VAD), pending: make([]int16, 0, HopSamples)}
	if len(heads) > 0 {
		d.ring, d.x = make([]int16, headPreRoll*HopSamples), make([]float32, WindowLen*EmbedDim)
	}
	for _, h := range heads {
		th := h.Info.Threshold
		if o.Threshold > 0 {
			th = o.Threshold
		}
		d.entries = append(d.entries, &headEntry{h: h, sc: h.newScratch(),
			pick: picker{Threshold: th, Refract: hops(o.Refractory)}})
	}
	return d
}

// Threshold is the threshold head i (in NewHeads' order) fires at.
func (d *Heads) Threshold(i int) float64 { return d.entries[i].pick.Threshold }

// NoiseFloorDBFS is the VAD's current background estimate.
func (d *Heads) NoiseFloorDBFS() float64 { return d.vad.FloorDBFS() }

// Process consumes samples and appends any detections to dst. onHop, when
// not nil, is called after each 10 ms hop with the VAD's verdict, for
// callers that need the speech/silence timeline (levels, command capture).
func (d *Heads) Process(dst []Detection, samples []int16, onHop func(speech bool)) []Detection {
	for len(samples) > 0 {
		n := min(len(samples), HopSamples-len(d.pending))
		d.pending = append(d.pending, samples[:n]...)
		samples = samples[n:]
		if len(d.pending) == HopSamples {
			speech := d.vad.Process(d.pending)
			dst = d.step(dst, d.pending, speech)
			d.pending = d.pending[:0]
			if onHop != nil {
				onHop(speech)
			}
		}
	}
	return dst
}

// step consumes one hop of HopSamples samples with the gate's verdict.
func (d *Heads) step(dst []Detection, hop []int16, speech bool) []Detection {
	now := d.hop
	d.hop++
	if len(d.entries) == 0 {
		return dst
	}
	d.keep(hop)
	if speech {
		d.silence = 0
	} else {
		d.silence++
	}
	if !d.open {
		if !speech {
			return dst
		}
		d.open = true
		d.fe.Reset()
		d.nwin = 0
		// Replay the pre-roll hop by hop, so each embedding is scored at
		// the hop that completed it.
		first := now + 1 - int64(d.ringN/HopSamples)
		start := (d.ringAt - d.ringN + len(d.ring)) % len(d.ring)
		for k := range d.ringN / HopSamples {
			o := (start + k*HopSamples) % len(d.ring)
			dst = d.feed(dst, d.ring[o:o+HopSamples], first+int64(k))
		}
		return dst
	}
	dst = d.feed(dst, hop, now)
	d.open = d.silence <= closeHops
	return dst
}

// keep appends a hop to the pre-roll ring.
func (d *Heads) keep(hop []int16) {
	copy(d.ring[d.ringAt:], hop)
	d.ringAt = (d.ringAt + HopSamples) % len(d.ring)
	d.ringN = min(d.ringN+HopSamples, len(d.ring))
}

// feed runs the frontend on one hop (stream hop number at) and scores the
// window after each embedding it completes.
func (d *Heads) feed(dst []Detection, hop []int16, at int64) []Detection {
	d.embs = d.fe.Push(d.embs[:0], hop)
	for _, e := range d.embs {
		d.win[d.nwin%WindowLen] = e
		d.nwin++
		if d.nwin < WindowLen {
			continue
		}
		for k := range WindowLen {
			copy(d.x[k*EmbedDim:], d.win[(d.nwin+k)%WindowLen][:])
		}
		for _, en := range d.entries {
			sc := en.h.score(en.sc, d.x)
			if en.pick.Step(at, sc) {
				dst = d.detection(dst, en, sc, at, d.hop-1)
			}
		}
	}
	return dst
}

// detection reports head e firing on the window that ends at hop at,
// decided at hop now (later than at for a window of the pre-roll).
func (d *Heads) detection(dst []Detection, e *headEntry, score float64, at, now int64) []Detection {
	end := hopTime(at + 1)
	d.quiet(at + e.pick.Refract)
	return append(dst, Detection{Name: e.h.Info.Name, Score: score,
		Start: max(0, end-time.Duration(WindowLen)*EmbedHop*time.Second/16000), End: end, At: hopTime(now + 1)})
}

// quiet silences every head until hop until: one phrase, one detection.
func (d *Heads) quiet(until int64) {
	for _, e := range d.entries {
		e.pick.Quiet(until)
	}
}
