package wakeword

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Net is a trained, speaker-independent wake-word model: a causal
// temporal convolutional network (TCN) over log-mel frames.
//
// Why this shape: the phrase lasts about a second, and a stack of causal
// convolutions with kernel 3 and dilations 1, 2, 4 … 32 sees 127 frames
// (1.27 s) while costing one column per layer per 10 ms hop: streaming
// inference is exact (no windows recomputed, no overlap bookkeeping) and
// a decision comes every hop. Layers after the first are residual, which
// keeps a deep stack trainable without normalisation layers, so there is
// no batch statistic to carry into streaming.
//
// Layer l computes, for every frame t,
//
//	y_t = relu(B + Σ_k W_k · x_{t-(K-1-k)·d})     (x before the stream: 0)
//	h_t = y_t (first layer) or x_t + y_t (the others)
//
// over inputs normalised with the training set's per-band mean and
// standard deviation, and the output is logit_t = OutW · h_t + OutB. The
// score is sigmoid(logit − Offset), where Offset was chosen at training so
// that a score of 0.5 gives the target false-accept rate on held-out
// negatives: the score is calibrated, and 0.5 is the default threshold.
//
// A model may hold several such networks (towers), trained on the same
// data from other random starts; its logit is the mean of theirs. One
// training's luck moves held-out recall by several points
// (the experiment log, docs/bench/wake-word.md); the mean of a few is steadier
// than any one of them.
//
// A model may also hold a verifier: towers trained on the phrase against
// its near misses only ("hey robat", "the robot", "hey robo"), whose
// probability multiplies the model's. The product can only lower the
// score, so the verifier vetoes; it never fires on its own. The main
// towers learn to hear the phrase in an hour of talk; the verifier
// spends all of its weights on the one-sound differences that the main
// towers, busy with everything else, let through.
type Net struct {
	Name   string // wake word name, e.g. hey_robot (what a Detection reports)
	Phrase string // the text it was trained on

	Towers []Tower
	// Verifier, if any, are towers whose mean logit's probability
	// multiplies the towers': see Net.
	Verifier []Tower
	// Smooth is how many hops the picker averages the score over before
	// the threshold (0: the default, 5); the threshold was calibrated on
	// that average.
	Smooth int
	Offset float32 // calibration: score = sigmoid(mean logit - Offset)

	// Training is the training configuration and its report summary as
	// JSON, kept with the weights so a model says how it was made.
	Training string
	Created  time.Time
}

// Tower is one network of a model.
type Tower struct {
	Mean, Std []float32 // per log-mel band
	// LogFloor, if not 0, raises every log-mel energy to at least this
	// before normalisation (natural log; -14 is white noise near -60
	// dBFS). Without it, the near-silence of a quiet room — a few
	// LSB of hiss, or digital zeros — reaches the network as large,
	// random swings between the analysis floor and the quantisation
	// noise, which a network trained mostly on noisy rooms reads as
	// anything; with it, silence is one steady input.
	LogFloor float32
	Layers   []Conv
	OutW     []float32
	OutB     float32
}

// Conv is one causal dilated convolution layer.
type Conv struct {
	In, Out, Kernel, Dilation int
	W                         []float32 // [Kernel][Out][In]
	B                         []float32 // [Out]
}

// Mels is the number of log-mel bands the network reads.
const Mels = numFilters

// ReceptiveField is how many frames one output depends on.
func (n *Net) ReceptiveField() int {
	rf := 0
	for _, t := range slices.Concat(n.Towers, n.Verifier) {
		rf = max(rf, t.receptiveField())
	}
	return rf
}

func (t *Tower) receptiveField() int {
	rf := 1
	for _, l := range t.Layers {
		rf += (l.Kernel - 1) * l.Dilation
	}
	return rf
}

// SmoothHops is the score smoothing the model was calibrated with.
func (n *Net) SmoothHops() int {
	if n.Smooth > 0 {
		return n.Smooth
	}
	return smoothHops
}

// Params is the number of trained weights.
func (n *Net) Params() int {
	p := 0
	for _, t := range slices.Concat(n.Towers, n.Verifier) {
		p += len(t.OutW) + 1
		for _, l := range t.Layers {
			p += len(l.W) + len(l.B)
		}
	}
	return p
}

// validate checks shapes and values, so that a model that loads can run.
func (n *Net) validate() error {
	if len(n.Towers) == 0 || len(n.Towers) > MaxTowers {
		return fmt.Errorf("%d towers (want 1..%d)", len(n.Towers), MaxTowers)
	}
	if len(n.Verifier) > MaxTowers {
		return fmt.Errorf("%d verifier towers (want 0..%d)", len(n.Verifier), MaxTowers)
	}
	if n.Smooth < 0 || n.Smooth > maxSmooth {
		return fmt.Errorf("score smoothing over %d hops (want 0..%d)", n.Smooth, maxSmooth)
	}
	if !finite([]float32{n.Offset}) {
		return fmt.Errorf("non-finite calibration")
	}
	for i := range n.Towers {
		if err := n.Towers[i].validate(); err != nil {
			if len(n.Towers) == 1 && len(n.Verifier) == 0 {
				return err
			}
			return fmt.Errorf("tower %d: %w", i, err)
		}
	}
	for i := range n.Verifier {
		if err := n.Verifier[i].validate(); err != nil {
			return fmt.Errorf("verifier tower %d: %w", i, err)
		}
	}
	return nil
}

func (t *Tower) validate() error {
	if len(t.Layers) == 0 || len(t.Layers) > maxLayers {
		return fmt.Errorf("%d layers (want 1..%d)", len(t.Layers), maxLayers)
	}
	if len(t.Mean) != Mels || len(t.Std) != Mels {
		return fmt.Errorf("input normalisation for %d/%d bands, want %d", len(t.Mean), len(t.Std), Mels)
	}
	in := Mels
	for i, l := range t.Layers {
		switch {
		case l.In != in:
			return fmt.Errorf("layer %d reads %d channels, the one before gives %d", i, l.In, in)
		case l.Out < 1 || l.Out > maxChannels:
			return fmt.Errorf("layer %d: %d channels (want 1..%d)", i, l.Out, maxChannels)
		case l.Kernel < 1 || l.Kernel > maxKernel:
			return fmt.Errorf("layer %d: kernel %d (want 1..%d)", i, l.Kernel, maxKernel)
		case l.Dilation < 1 || l.Dilation > maxDilation:
			return fmt.Errorf("layer %d: dilation %d (want 1..%d)", i, l.Dilation, maxDilation)
		case i > 0 && l.In != l.Out:
			return fmt.Errorf("layer %d: residual layer must keep its width (%d → %d)", i, l.In, l.Out)
		case len(l.W) != l.Kernel*l.Out*l.In || len(l.B) != l.Out:
			return fmt.Errorf("layer %d: %d weights and %d biases for shape %dx%dx%d", i, len(l.W), len(l.B), l.Kernel, l.Out, l.In)
		}
		in = l.Out
	}
	if len(t.OutW) != in {
		return fmt.Errorf("output layer reads %d channels, the network gives %d", len(t.OutW), in)
	}
	if !finite(t.Mean) || !finite(t.OutW) || !finite([]float32{t.OutB, t.LogFloor}) {
		return fmt.Errorf("non-finite weights")
	}
	for _, s := range t.Std {
		if !(s > 0) || math.IsInf(float64(s), 0) {
			return fmt.Errorf("input standard deviation %v", s)
		}
	}
	for i, l := range t.Layers {
		if !finite(l.W) || !finite(l.B) {
			return fmt.Errorf("layer %d: non-finite weights", i)
		}
	}
	return nil
}

func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// Limits on a model's shape: generous for any model worth running on a Pi,
// and small enough that a corrupt header cannot ask for gigabytes.
const (
	MaxTowers   = 8 // towers in one model
	maxLayers   = 16
	maxChannels = 256
	maxKernel   = 9
	maxDilation = 256
)

// netState runs a Net over a stream, one frame at a time, without
// allocating.
type netState struct {
	towers, verifier []towerState
}

func newNetState(n *Net) *netState {
	s := &netState{towers: make([]towerState, len(n.Towers)), verifier: make([]towerState, len(n.Verifier))}
	for i := range n.Towers {
		s.towers[i].init(&n.Towers[i])
	}
	for i := range n.Verifier {
		s.verifier[i].init(&n.Verifier[i])
	}
	return s
}

// step consumes one frame of natural-log mel energies and returns the
// model's logit for the window ending with it: the towers' mean, or with
// a verifier the logit of the product of the two probabilities.
func (s *netState) step(logMel []float64) float32 {
	l := meanStep(s.towers, logMel)
	if len(s.verifier) == 0 {
		return l
	}
	return bothLogit(l, meanStep(s.verifier, logMel))
}

func meanStep(ts []towerState, logMel []float64) float32 {
	var sum float32
	for i := range ts {
		sum += ts[i].step(logMel)
	}
	return sum / float32(len(ts))
}

// bothLogit is logit(sigmoid(a)·sigmoid(b)): with log q = -softplus(-a)
// - softplus(-b), logit q = log q - log(1-q), and 1-q from expm1 so that
// a product near 1 keeps its precision.
func bothLogit(a, b float32) float32 {
	lq := -Softplus(-float64(a)) - Softplus(-float64(b))
	return float32(lq - math.Log(-math.Expm1(lq)))
}

// Softplus is log(1+e^z) without overflow: the training's loss uses it
// too.
func Softplus(z float64) float64 {
	if z > 30 {
		return z
	}
	return math.Log1p(math.Exp(z))
}

// towerState runs one tower: each layer keeps a ring of the inputs its
// kernel reaches back to.
type towerState struct {
	t     *Tower
	rings [][]float32 // per layer: span frames × In
	spans []int
	pos   int // frames pushed so far (ring index = pos % span)
	in    []float32
	acc   []float32
	pp    [2][]float32 // layer outputs, alternating
}

func (s *towerState) init(t *Tower) {
	s.t, s.in = t, make([]float32, Mels)
	w := 0
	for _, l := range t.Layers {
		span := (l.Kernel-1)*l.Dilation + 1
		s.spans = append(s.spans, span)
		s.rings = append(s.rings, make([]float32, span*l.In))
		w = max(w, l.Out)
	}
	s.acc = make([]float32, w)
	s.pp = [2][]float32{make([]float32, w), make([]float32, w)}
}

func (s *towerState) step(logMel []float64) float32 {
	t := s.t
	for i := range s.in {
		v := float32(logMel[i])
		if t.LogFloor != 0 {
			v = max(v, t.LogFloor)
		}
		s.in[i] = (v - t.Mean[i]) / t.Std[i]
	}
	x := s.in
	for li := range t.Layers {
		l := &t.Layers[li]
		span := s.spans[li]
		ring := s.rings[li]
		slot := s.pos % span
		copy(ring[slot*l.In:(slot+1)*l.In], x)
		acc := s.acc[:l.Out]
		copy(acc, l.B)
		for k := 0; k < l.Kernel; k++ {
			back := (l.Kernel - 1 - k) * l.Dilation
			src := ((s.pos-back)%span + span) % span
			xin := ring[src*l.In : (src+1)*l.In]
			wk := l.W[k*l.Out*l.In : (k+1)*l.Out*l.In]
			for o := range acc {
				acc[o] += Dot(wk[o*l.In:(o+1)*l.In], xin)
			}
		}
		out := s.pp[li%2][:l.Out]
		for o, v := range acc {
			v = max(v, 0)
			if li > 0 {
				v += x[o]
			}
			out[o] = v
		}
		x = out
	}
	s.pos++
	return Dot(t.OutW, x) + t.OutB
}

// Dot is the inner product the network runs on; unrolled because it is
// nearly all of the network's time. Training computes the output layer
// with it too, so both sum in the same order.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// Score turns a logit into the calibrated score.
func (n *Net) Score(logit float32) float64 {
	return 1 / (1 + math.Exp(-float64(logit-n.Offset)))
}
