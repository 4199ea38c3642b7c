package wakeword

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The hand-written backward pass agrees with finite differences of the
// loss, for weights and biases of every layer.
func TestMLPGradient(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	n := newMLP(r, []int{5, 3})
	g := n.newGrads()
	for i := range g.act[0] {
		g.act[0][i] = float32(r.NormFloat64())
	}
	x := append([]float32(nil), g.act[0]...)
	loss := func() float64 {
		copy(g.act[0], x)
		z := n.forward(g)
		p := 1 / (1 + math.Exp(-float64(z)))
		return -math.Log(p) // y = 1
	}
	g.zero()
	copy(g.act[0], x)
	n.backward(g, n.forward(g), 1, 1)
	check := func(what string, p *float32, analytic float32) {
		const h = 1e-2
		old := *p
		*p = old + h
		up := loss()
		*p = old - h
		down := loss()
		*p = old
		num := (up - down) / (2 * h)
		if d := math.Abs(num - float64(analytic)); d > 1e-3+0.02*math.Abs(num) {
			t.Errorf("%s: analytic %.5f, numeric %.5f", what, analytic, num)
		}
	}
	for li, l := range n.layers {
		for _, k := range []int{0, len(l.W) / 2, len(l.W) - 1} {
			check("W", &l.W[k], g.dW[li][k])
		}
		check("B", &l.B[0], g.dB[li][0])
	}
}
