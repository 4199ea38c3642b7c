package wakeword

import (
	"context"
	"math"
	"math/rand/v2"

	"github.com/edgeagent/edgeagent/internal/f32"
	ww "github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// A head is trained as a plain multi-layer perceptron over the window of
// embeddings: ReLU hidden layers, a sigmoid output, weighted binary
// cross-entropy, Adam. The measurements found a linear head too
// weak (24 of 84 held-out clips) and one hidden layer of 64 strong (54–62).

// sample is one training window: embedding j of clip c ends it.
type sample struct {
	c int32
	j int16
	y float32 // 1: the phrase just ended; 0: anything else
	w float32 // loss weight
}

type mlp struct{ layers []ww.Layer }

func newMLP(r *rand.Rand, hidden []int) *mlp {
	n := &mlp{}
	in := ww.WindowLen * ww.EmbedDim
	for _, out := range append(append([]int(nil), hidden...), 1) {
		l := ww.Layer{In: in, Out: out, W: make([]float32, in*out), B: make([]float32, out)}
		s := math.Sqrt(2 / float64(in)) // He: ReLU halves the variance
		for i := range l.W {
			l.W[i] = float32(r.NormFloat64() * s)
		}
		n.layers = append(n.layers, l)
		in = out
	}
	return n
}

// grads is one worker's accumulated gradient and activations.
type grads struct {
	dW, dB [][]float32
	act    [][]float32 // activations per layer (act[0] the input)
	delta  [][]float32
	loss   float64
	// Dropout of hidden units while training: drop is the rate, r the
	// shard's random stream (nil: no dropout, as when scoring).
	drop float32
	r    *rand.Rand
}

func (n *mlp) newGrads() *grads {
	g := &grads{act: [][]float32{make([]float32, ww.WindowLen*ww.EmbedDim)}}
	for _, l := range n.layers {
		g.dW = append(g.dW, make([]float32, len(l.W)))
		g.dB = append(g.dB, make([]float32, len(l.B)))
		g.act = append(g.act, make([]float32, l.Out))
		g.delta = append(g.delta, make([]float32, l.Out))
	}
	return g
}

func (g *grads) zero() {
	for i := range g.dW {
		clear(g.dW[i])
		clear(g.dB[i])
	}
	g.loss = 0
}

// forward fills g.act from g.act[0] and returns the output's logit. With
// dropout, a dropped hidden unit is 0 and a kept one is scaled by
// 1/(1−drop), so scoring without dropout sees the same expectation.
func (n *mlp) forward(g *grads) float32 {
	keep := 1 / (1 - g.drop)
	for i, l := range n.layers {
		in, out := g.act[i], g.act[i+1]
		for o := range l.Out {
			v := l.B[o] + f32.Dot(l.W[o*l.In:(o+1)*l.In], in)
			if i < len(n.layers)-1 {
				v = max(v, 0)
				if g.r != nil && g.drop > 0 {
					if g.r.Float32() < g.drop {
						v = 0
					} else {
						v *= keep
					}
				}
			}
			out[o] = v
		}
	}
	return g.act[len(n.layers)][0]
}

// backward accumulates the gradient of one sample's weighted loss.
func (n *mlp) backward(g *grads, z, y, w float32) {
	p := 1 / (1 + math.Exp(-float64(z)))
	g.loss += float64(w) * -(float64(y)*math.Log(max(p, 1e-7)) + float64(1-y)*math.Log(max(1-p, 1e-7)))
	last := len(n.layers) - 1
	g.delta[last][0] = w * (float32(p) - y)
	for i := last; i >= 0; i-- {
		l, in, d := n.layers[i], g.act[i], g.delta[i]
		for o, dv := range d {
			if dv == 0 {
				continue
			}
			g.dB[i][o] += dv
			axpy(g.dW[i][o*l.In:(o+1)*l.In], dv, in)
		}
		if i == 0 {
			break
		}
		prev := g.delta[i-1]
		clear(prev)
		for o, dv := range d {
			if dv != 0 {
				axpy(prev, dv, l.W[o*l.In:(o+1)*l.In])
			}
		}
		keep := float32(1)
		if g.r != nil && g.drop > 0 {
			keep = 1 / (1 - g.drop)
		}
		for k, a := range g.act[i] {
			if a <= 0 { // below the ReLU's knee, or dropped
				prev[k] = 0
			} else {
				prev[k] *= keep
			}
		}
	}
}

func axpy(dst []float32, a float32, x []float32) {
	x = x[:len(dst)]
	for i := range dst {
		dst[i] += a * x[i]
	}
}

// adam is the optimiser's state for every parameter slice.
type adam struct {
	m, v [][]float32
	t    int
}

func newAdam(n *mlp) *adam {
	a := &adam{}
	for _, l := range n.layers {
		a.m = append(a.m, make([]float32, len(l.W)), make([]float32, len(l.B)))
		a.v = append(a.v, make([]float32, len(l.W)), make([]float32, len(l.B)))
	}
	return a
}

func (a *adam) step(n *mlp, g *grads, lr, decay float64, scale float32) {
	a.t++
	const b1, b2, eps = 0.9, 0.999, 1e-8
	c1 := 1 - math.Pow(b1, float64(a.t))
	c2 := 1 - math.Pow(b2, float64(a.t))
	k := 0
	for i, l := range n.layers {
		for _, pg := range [2]struct {
			p, g []float32
			wd   bool
		}{{l.W, g.dW[i], true}, {l.B, g.dB[i], false}} {
			m, v := a.m[k], a.v[k]
			for j, gv := range pg.g {
				gv *= scale
				m[j] = b1*m[j] + (1-b1)*gv
				v[j] = b2*v[j] + (1-b2)*gv*gv
				upd := lr * (float64(m[j]) / c1) / (math.Sqrt(float64(v[j])/c2) + eps)
				if pg.wd {
					upd += lr * decay * float64(pg.p[j])
				}
				pg.p[j] -= float32(upd)
			}
			k++
		}
	}
}

// fitter trains an mlp on samples over clips' embeddings.
type fitter struct {
	net     *mlp
	opt     *adam
	clips   []embedded
	workers int
	shards  []*grads
	seed    uint64
	drop    float32
	steps   uint64
}

// shards is how many pieces a batch is cut into, whatever the number of
// workers: float sums depend on their order, and a fixed cut keeps the
// head the same for a seed on any machine.
const shards = 4

func newFitter(net *mlp, clips []embedded, workers int) *fitter {
	f := &fitter{net: net, opt: newAdam(net), clips: clips, workers: max(1, workers)}
	for range shards {
		f.shards = append(f.shards, net.newGrads())
	}
	return f
}

// batch takes one optimiser step on the samples. The shards' gradients
// are summed in order, so the result does not depend on the scheduling.
func (f *fitter) batch(ctx context.Context, b []sample, lr, decay float64) float64 {
	n := len(f.shards)
	per := (len(b) + n - 1) / n
	f.steps++
	_ = parallel(ctx, n, f.workers, func(w int) {
		g := f.shards[w]
		g.zero()
		if f.drop > 0 { // each shard's own stream: the same masks whatever the scheduling
			g.r, g.drop = rand.New(rand.NewPCG(f.seed, f.steps*shards+uint64(w))), f.drop
		}
		defer func() { g.r = nil }()
		for _, s := range b[min(len(b), w*per):min(len(b), (w+1)*per)] {
			g.act[0] = f.clips[s.c].window(g.act[0][:0], int(s.j))
			f.net.backward(g, f.net.forward(g), s.y, s.w)
		}
	})
	sum := f.shards[0]
	for _, g := range f.shards[1:] {
		for i := range sum.dW {
			axpy(sum.dW[i], 1, g.dW[i])
			axpy(sum.dB[i], 1, g.dB[i])
		}
		sum.loss += g.loss
	}
	f.opt.step(f.net, sum, lr, decay, 1/float32(len(b)))
	return sum.loss / float64(len(b))
}

// score is the net's probability for one window.
func (f *fitter) score(g *grads, s sample) float64 {
	g.act[0] = f.clips[s.c].window(g.act[0][:0], int(s.j))
	return 1 / (1 + math.Exp(-float64(f.net.forward(g))))
}

// scoreAll scores every sample with the workers, into fixed slots.
func (f *fitter) scoreAll(ctx context.Context, ss []sample) []float64 {
	out := make([]float64, len(ss))
	n := len(f.shards)
	per := (len(ss) + n - 1) / n
	_ = parallel(ctx, n, f.workers, func(w int) {
		for i := w * per; i < min(len(ss), (w+1)*per); i++ {
			out[i] = f.score(f.shards[w], ss[i])
		}
	})
	return out
}
