package wwtrain

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// Training clips are clipHops frames long; the loss is taken from frame
// lossFrom on, where the network's receptive field is (mostly) filled, so
// every loss frame sees real history as it would in streaming.
const (
	clipHops = 200
	lossFrom = 100
	clipLen  = clipHops * wakeword.HopSamples
)

// Frame labels.
const (
	labelNeg    int8 = 0
	labelPos    int8 = 1
	labelIgnore int8 = -1
)

// Fire window: the network should fire from just before the phrase's last
// frame (the final consonant is often already clear) to posAfter hops
// after it, and must stay quiet until negBefore hops before it, where the
// phrase is not yet complete ("hey robo"). After the window, the recipe's
// IgnoreAfter hops are unlabelled, and the rest negative.
const (
	posBefore = 2
	posAfter  = 20
	negBefore = 12
)

// dataset holds clips as log-mel frames (normalised) and frame labels.
type dataset struct {
	x    []float32 // clips × clipHops × Mels
	y    []int8    // clips × clipHops
	n    int
	npos int // clips with the phrase
	// floor is the network's LogFloor (0: none), applied to every
	// frame as the detector will.
	floor float32
	// quietAfter is how many hops after the fire window are left
	// unlabelled (Config.IgnoreAfter).
	quietAfter int
	// near are the clips [near[0], near[1]) of near misses, whose
	// clip-level negative term the recipe may weigh apart (negWeight).
	near [2]int
	// mean and std normalised x (normalise), per band.
	mean, std []float32
	// ph are the clips' phone targets (phones.go; none for clips past
	// its end or with no symbols), for a head of phones outputs.
	ph     []phoneTarget
	phones int
}

// phoneTarget returns clip c's phone target, if it has one.
func (d *dataset) phoneTarget(c int) (phoneTarget, bool) {
	if c < len(d.ph) && len(d.ph[c].ids) > 0 {
		return d.ph[c], true
	}
	return phoneTarget{}, false
}

func (d *dataset) clip(i int) ([]float32, []int8) {
	return d.x[i*clipHops*wakeword.Mels : (i+1)*clipHops*wakeword.Mels], d.y[i*clipHops : (i+1)*clipHops]
}

// negWeight scales clip c's clip-level negative term: by near for a
// near miss (0: not at all, as 1).
func (d *dataset) negWeight(c int, near float32) float32 {
	if near > 0 && c >= d.near[0] && c < d.near[1] {
		return near
	}
	return 1
}

// newDataset holds n clips, with room for spare more (addNegatives)
// that costs no memory until they are written.
func newDataset(n, spare int) *dataset {
	return &dataset{x: make([]float32, n*clipHops*wakeword.Mels, (n+spare)*clipHops*wakeword.Mels),
		y: make([]int8, n*clipHops, (n+spare)*clipHops), n: n}
}

// set renders a scene into clip i with its frame labels: for a positive
// scene, phraseEnd is the sample where the phrase ends; -1 for negatives.
func (d *dataset) set(i int, sc scene, babble [][]int16, phraseEnd int) {
	d.setAudio(i, sc.render(babble), phraseEnd)
}

// setAudio is set for audio already mixed (clipLen samples).
func (d *dataset) setAudio(i int, audio []int16, phraseEnd int) {
	x, y := d.clip(i)
	d.raise(logMels(x[:0], audio))
	eh := phraseEnd / wakeword.HopSamples
	for f := range y {
		l := labelNeg
		switch {
		case f < lossFrom:
			l = labelIgnore
		case phraseEnd < 0:
		case f >= eh-posBefore && f <= eh+posAfter:
			l = labelPos
		case f > eh-negBefore && f <= eh+posAfter+d.quietAfter:
			l = labelIgnore
		}
		y[f] = l
	}
}

// normalise computes the per-band mean and standard deviation over all
// frames and applies them.
func (d *dataset) normalise() (mean, std []float32) {
	mean, std = d.stats()
	d.scale(0, mean, std)
	return mean, std
}

// stats are the per-band mean and standard deviation over all frames.
func (d *dataset) stats() (mean, std []float32) {
	m := wakeword.Mels
	sum := make([]float64, m)
	sq := make([]float64, m)
	n := len(d.x) / m
	for f := 0; f < n; f++ {
		for b := 0; b < m; b++ {
			v := float64(d.x[f*m+b])
			sum[b] += v
			sq[b] += v * v
		}
	}
	mean, std = make([]float32, m), make([]float32, m)
	for b := range mean {
		mu := sum[b] / float64(n)
		mean[b] = float32(mu)
		std[b] = float32(math.Sqrt(max(sq[b]/float64(n)-mu*mu, 1e-4)))
	}
	return mean, std
}

// scale normalises clips from `from` on with mean and std.
func (d *dataset) scale(from int, mean, std []float32) {
	standardise(d.x[from*clipHops*wakeword.Mels:], mean, std)
	d.mean, d.std = mean, std
}

// raise applies the network's input floor (if any) to log-mel frames.
func (d *dataset) raise(x []float32) {
	if d.floor != 0 {
		for j, v := range x {
			x[j] = max(v, d.floor)
		}
	}
}

// standardise normalises log-mel frames x per band with mean and std.
func standardise(x, mean, std []float32) {
	for j, v := range x {
		b := j % wakeword.Mels
		x[j] = (v - mean[b]) / std[b]
	}
}

// features are audio's frames as the network reads them after
// normalise: log-mel energies, the input floor, the training set's
// normalisation; clips of any length.
func (d *dataset) features(audio []int16) []float32 {
	x := logMels(nil, audio)
	d.raise(x)
	standardise(x, d.mean, d.std)
	return x
}

// addNegatives appends negative clips made of audio (clipLen samples
// each), normalised as the rest: in the room newDataset left, if any.
func (d *dataset) addNegatives(audio [][]int16) {
	from := d.n
	d.n += len(audio)
	nx, ny := len(audio)*clipHops*wakeword.Mels, len(audio)*clipHops
	d.x = slices.Grow(d.x, nx)[:len(d.x)+nx]
	d.y = slices.Grow(d.y, ny)[:len(d.y)+ny]
	for i, a := range audio {
		d.setAudio(from+i, a, -1)
	}
	d.scale(from, d.mean, d.std)
}

// Random scene parameters for training.
var trainNoises = []string{"", "white", "pink", "pink", "babble", "babble"}

func randomScene(r *rand.Rand) scene {
	sc := scene{length: clipLen, noise: pick(r, trainNoises), snr: 0 + 25*r.Float64(),
		reverb: r.IntN(10) < 4, eq: r.IntN(2) == 0, peak: -30 + 27*r.Float64(), seed: r.Uint64()}
	return sc
}

// placeEnding puts x so that it ends at a random hop in the loss region,
// leaving room after it for the fire window; returns the end sample.
func placeEnding(r *rand.Rand, sc *scene, x []int16) int {
	endHop := lossFrom + negBefore + 18 + r.IntN(clipHops-lossFrom-negBefore-18-posAfter-5)
	end := endHop*wakeword.HopSamples + r.IntN(wakeword.HopSamples)
	at := end - len(x)
	sc.parts = append(sc.parts, placed{x: x, at: at})
	return end
}

// placeBefore puts other speech before the sample `before`, with a pause,
// as in "… turn it off. Hey robot".
func placeBefore(r *rand.Rand, sc *scene, x []int16, before int) {
	gap := 3200 + r.IntN(8000) // 0.2–0.7 s
	sc.parts = append(sc.parts, placed{x: x, at: before - gap - len(x)})
}
