package wwtrain

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// tcn is the trainable form of wakeword.Net: the same layers, with all
// weights in one slice (so Adam and gradient sums are single loops) and a
// whole-clip forward and backward pass. The streaming pass in package
// wakeword must give the same logits; a test checks it.
type tcn struct {
	layers []tlayer
	params []float32
	outW   []float32 // views into params
	outB   []float32
	// phones is the size of the phone head (phones.go; 0: none), a
	// training-only output whose weights follow the detector's in params.
	phones   int
	phW, phB []float32
}

type tlayer struct {
	in, out, kernel, dil int
	w, b                 []float32 // views into params (or into a gradient buffer)
}

// newTCN makes the network with He initialisation; residual layers start
// small so the stack begins close to the identity.
func newTCN(channels, kernel int, dilations []int, r *rand.Rand) *tcn {
	t := &tcn{}
	size := 0
	in := wakeword.Mels
	for _, d := range dilations {
		t.layers = append(t.layers, tlayer{in: in, out: channels, kernel: kernel, dil: d})
		size += kernel*channels*in + channels
		in = channels
	}
	size += channels + 1
	t.params = make([]float32, size)
	t.bind(t.params)
	for i, l := range t.layers {
		std := math.Sqrt(2 / float64(l.kernel*l.in))
		if i > 0 {
			std *= 0.5
		}
		for j := range l.w {
			l.w[j] = float32(r.NormFloat64() * std)
		}
	}
	for j := range t.outW {
		t.outW[j] = float32(r.NormFloat64() * 0.1 / math.Sqrt(float64(channels)))
	}
	t.outB[0] = -2 // most frames are not the phrase
	return t
}

// bind points the layer views at p (params or a same-shaped gradient).
func (t *tcn) bind(p []float32) {
	o := 0
	take := func(n int) []float32 { v := p[o : o+n : o+n]; o += n; return v }
	for i := range t.layers {
		l := &t.layers[i]
		l.w = take(l.kernel * l.out * l.in)
		l.b = take(l.out)
	}
	c := t.layers[len(t.layers)-1].out
	t.outW = take(c)
	t.outB = take(1)
	t.phW = take(t.phones * c)
	t.phB = take(t.phones)
}

// view returns a copy of t's shape whose weights are p.
func (t *tcn) view(p []float32) *tcn {
	v := &tcn{layers: append([]tlayer(nil), t.layers...), params: p, phones: t.phones}
	v.bind(p)
	return v
}

// work holds one clip's activations and gradients; one per worker.
type work struct {
	z, h   [][]float32 // per layer, T × out: pre-activation and output
	dh, dz []float32
	dx     []float32
	logit  []float32
	masked []float32 // SpecAugment's copy of the input
	ctc    *ctcWork  // the phone head's (phones.go), made when first needed
}

func (t *tcn) newWork(frames int) *work {
	w := &work{logit: make([]float32, frames)}
	c := 0
	for _, l := range t.layers {
		w.z = append(w.z, make([]float32, frames*l.out))
		w.h = append(w.h, make([]float32, frames*l.out))
		c = max(c, l.out, l.in)
	}
	w.dh = make([]float32, frames*c)
	w.dz = make([]float32, frames*c)
	w.dx = make([]float32, frames*c)
	return w
}

// The convolutions run as matrix products (gonum's blas32, whose inner
// loops are vectorised): for each tap k, the frames shifted by that tap's
// delay times the tap's weight matrix. Products of the same shapes in the
// same order give the same sums, so training stays deterministic.

func mat(rows, cols int, data []float32) blas32.General {
	return blas32.General{Rows: rows, Cols: cols, Stride: cols, Data: data[:rows*cols]}
}

// forward computes the logits of every frame of x (T × Mels, normalised).
func (t *tcn) forward(w *work, x []float32, frames int) {
	in := x
	for li, l := range t.layers {
		z, h := w.z[li][:frames*l.out], w.h[li][:frames*l.out]
		for f := 0; f < frames; f++ {
			copy(z[f*l.out:(f+1)*l.out], l.b)
		}
		for k := 0; k < l.kernel; k++ {
			back := (l.kernel - 1 - k) * l.dil
			if back >= frames {
				continue
			}
			n := frames - back
			wk := l.w[k*l.out*l.in : (k+1)*l.out*l.in]
			blas32.Gemm(blas.NoTrans, blas.Trans, 1, mat(n, l.in, in), mat(l.out, l.in, wk), 1, mat(n, l.out, z[back*l.out:]))
		}
		for i, v := range z {
			v = max(v, 0)
			if li > 0 {
				v += in[i]
			}
			h[i] = v
		}
		in = h
	}
	c := t.layers[len(t.layers)-1].out
	for f := 0; f < frames; f++ {
		w.logit[f] = wakeword.Dot(t.outW, in[f*c:(f+1)*c]) + t.outB[0]
	}
}

// backward accumulates into g (a tcn view of a gradient buffer) the
// gradient for dlogit per frame, and for dtop on the top layer's output
// (nil: none; the phone head's), after forward on the same x.
func (t *tcn) backward(w *work, g *tcn, x []float32, dlogit, dtop []float32, frames int) {
	L := len(t.layers)
	c := t.layers[L-1].out
	top := w.h[L-1]
	dh := w.dh[:frames*c]
	if dtop != nil {
		copy(dh, dtop[:frames*c])
	} else {
		clear(dh)
	}
	for f := 0; f < frames; f++ {
		d := dlogit[f]
		if d == 0 {
			continue
		}
		g.outB[0] += d
		axpy(g.outW, d, top[f*c:(f+1)*c])
		axpy(dh[f*c:(f+1)*c], d, t.outW)
	}
	for li := L - 1; li >= 0; li-- {
		l, gl := t.layers[li], g.layers[li]
		in := x
		if li > 0 {
			in = w.h[li-1]
		}
		z := w.z[li]
		dz := w.dz[:frames*l.out]
		for i, v := range z[:frames*l.out] {
			if v > 0 {
				dz[i] = dh[i]
			} else {
				dz[i] = 0
			}
		}
		for f := 0; f < frames; f++ {
			axpy(gl.b, 1, dz[f*l.out:(f+1)*l.out])
		}
		var dx []float32
		if li > 0 {
			// The residual passes dh straight through.
			dx = w.dx[:frames*l.in]
			copy(dx, dh[:frames*l.in])
		}
		for k := 0; k < l.kernel; k++ {
			back := (l.kernel - 1 - k) * l.dil
			if back >= frames {
				continue
			}
			n := frames - back
			wk := l.w[k*l.out*l.in : (k+1)*l.out*l.in]
			gk := gl.w[k*l.out*l.in : (k+1)*l.out*l.in]
			dzs := mat(n, l.out, dz[back*l.out:])
			blas32.Gemm(blas.Trans, blas.NoTrans, 1, dzs, mat(n, l.in, in), 1, mat(l.out, l.in, gk))
			if dx != nil {
				blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, dzs, mat(l.out, l.in, wk), 1, mat(n, l.in, dx))
			}
		}
		if dx != nil {
			copy(dh[:frames*l.in], dx)
		}
	}
}

// axpy adds a·x to y.
func axpy(y []float32, a float32, x []float32) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

// adam is the Adam optimiser over one parameter slice.
type adam struct {
	m, v   []float32
	t      int
	b1, b2 float64
}

func newAdam(n int) *adam {
	return &adam{m: make([]float32, n), v: make([]float32, n), b1: 0.9, b2: 0.999}
}

func (a *adam) step(p, g []float32, lr float64) {
	a.t++
	c1 := 1 - math.Pow(a.b1, float64(a.t))
	c2 := 1 - math.Pow(a.b2, float64(a.t))
	b1, b2 := float32(a.b1), float32(a.b2)
	for i := range p {
		gi := g[i]
		a.m[i] = b1*a.m[i] + (1-b1)*gi
		a.v[i] = b2*a.v[i] + (1-b2)*gi*gi
		mh := float64(a.m[i]) / c1
		vh := float64(a.v[i]) / c2
		p[i] -= float32(lr * mh / (math.Sqrt(vh) + 1e-8))
	}
}

// tower converts the trained network to the detector's form.
func (t *tcn) tower(mean, std []float32, floor float32) wakeword.Tower {
	w := wakeword.Tower{Mean: mean, Std: std, LogFloor: floor, OutW: append([]float32(nil), t.outW...), OutB: t.outB[0]}
	for _, l := range t.layers {
		w.Layers = append(w.Layers, wakeword.Conv{In: l.in, Out: l.out, Kernel: l.kernel, Dilation: l.dil,
			W: append([]float32(nil), l.w...), B: append([]float32(nil), l.b...)})
	}
	return w
}

// tcnFrom is the trainable form of a trained tower (its weights copied).
func tcnFrom(w wakeword.Tower) *tcn {
	t := &tcn{}
	size := 0
	for _, l := range w.Layers {
		t.layers = append(t.layers, tlayer{in: l.In, out: l.Out, kernel: l.Kernel, dil: l.Dilation})
		size += len(l.W) + len(l.B)
	}
	t.params = make([]float32, size+len(w.OutW)+1)
	t.bind(t.params)
	for i, l := range w.Layers {
		copy(t.layers[i].w, l.W)
		copy(t.layers[i].b, l.B)
	}
	copy(t.outW, w.OutW)
	t.outB[0] = w.OutB
	return t
}
