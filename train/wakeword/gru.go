package wakeword

import (
	"math"
	"math/rand/v2"

	"github.com/edgeagent/edgeagent/internal/f32"
	ww "github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// A GRU head (ww.ArchGRU) is trained through time over the window's
// WindowLen steps. Its parameters are held as three layers (input,
// recurrent, output weights), so the optimiser and the head file treat
// them as they treat a perceptron's.

func newGRU(r *rand.Rand, h int) *mlp {
	d := ww.EmbedDim
	n := &mlp{gru: h, layers: []ww.Layer{
		{In: d, Out: 3 * h, W: make([]float32, 3*h*d), B: make([]float32, 3*h)},
		{In: h, Out: 3 * h, W: make([]float32, 3*h*h), B: make([]float32, 3*h)},
		{In: h, Out: 1, W: make([]float32, h), B: make([]float32, 1)},
	}}
	s := 1 / math.Sqrt(float64(h)) // as PyTorch's GRU: U(−1/√H, 1/√H)
	for _, l := range n.layers {
		for i := range l.W {
			l.W[i] = float32(s * (2*r.Float64() - 1))
		}
		for i := range l.B {
			l.B[i] = float32(s * (2*r.Float64() - 1))
		}
	}
	return n
}

// gruCache holds one window's forward pass: per step the state before
// it, the gates and the recurrent part of the candidate.
type gruCache struct {
	hs, r, z, c, bn [][]float32 // [step][H]; hs has WindowLen+1 states
	a, b            []float32   // 3H scratch
	dh, dnext, da   []float32
	dah             []float32
}

func newGRUCache(h int) *gruCache {
	mk := func(n int) [][]float32 {
		out := make([][]float32, n)
		for i := range out {
			out[i] = make([]float32, h)
		}
		return out
	}
	return &gruCache{hs: mk(ww.WindowLen + 1), r: mk(ww.WindowLen), z: mk(ww.WindowLen), c: mk(ww.WindowLen),
		bn: mk(ww.WindowLen), a: make([]float32, 3*h), b: make([]float32, 3*h), dh: make([]float32, h),
		dnext: make([]float32, h), da: make([]float32, 3*h), dah: make([]float32, 3*h)}
}

func (n *mlp) gruForward(g *grads) float32 {
	wi, wh, wo := n.layers[0], n.layers[1], n.layers[2]
	c, h, x := g.seq, n.gru, g.act[0]
	clear(c.hs[0])
	for t := range ww.WindowLen {
		xt := x[t*ww.EmbedDim : (t+1)*ww.EmbedDim]
		prev, next := c.hs[t], c.hs[t+1]
		for o := range 3 * h {
			c.a[o] = wi.B[o] + f32.Dot(wi.W[o*wi.In:(o+1)*wi.In], xt)
			c.b[o] = wh.B[o] + f32.Dot(wh.W[o*h:(o+1)*h], prev)
		}
		for k := range h {
			r := sig32(c.a[k] + c.b[k])
			z := sig32(c.a[h+k] + c.b[h+k])
			cn := float32(math.Tanh(float64(c.a[2*h+k] + r*c.b[2*h+k])))
			c.r[t][k], c.z[t][k], c.c[t][k], c.bn[t][k] = r, z, cn, c.b[2*h+k]
			next[k] = (1-z)*cn + z*prev[k]
		}
	}
	return wo.B[0] + f32.Dot(wo.W, c.hs[ww.WindowLen])
}

func sig32(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) }

// gruBackward accumulates the gradient of the loss whose derivative by
// the logit is dz.
func (n *mlp) gruBackward(g *grads, dz float32) {
	wi, wh := n.layers[0], n.layers[1]
	c, h, x := g.seq, n.gru, g.act[0]
	g.dB[2][0] += dz
	axpy(g.dW[2], dz, c.hs[ww.WindowLen])
	for k := range h {
		c.dh[k] = dz * n.layers[2].W[k]
	}
	for t := ww.WindowLen - 1; t >= 0; t-- {
		prev := c.hs[t]
		for k := range h {
			dh, r, z, cn := c.dh[k], c.r[t][k], c.z[t][k], c.c[t][k]
			dan := dh * (1 - z) * (1 - cn*cn)
			dr := dan * c.bn[t][k]
			dzg := dh * (prev[k] - cn) * z * (1 - z)
			dar := dr * r * (1 - r)
			c.da[k], c.da[h+k], c.da[2*h+k] = dar, dzg, dan
			c.dah[k], c.dah[h+k], c.dah[2*h+k] = dar, dzg, dan*r
			c.dnext[k] = dh * z
		}
		xt := x[t*ww.EmbedDim : (t+1)*ww.EmbedDim]
		for o := range 3 * h {
			if d := c.da[o]; d != 0 {
				g.dB[0][o] += d
				axpy(g.dW[0][o*wi.In:(o+1)*wi.In], d, xt)
			}
			if d := c.dah[o]; d != 0 {
				g.dB[1][o] += d
				axpy(g.dW[1][o*h:(o+1)*h], d, prev)
				axpy(c.dnext, d, wh.W[o*h:(o+1)*h])
			}
		}
		c.dh, c.dnext = c.dnext, c.dh
	}
}
