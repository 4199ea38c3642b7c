package wakeword

import (
	"errors"
	"math"

	"github.com/edgeagent/edgeagent/internal/f32"
)

// ArchGRU marks a head that reads its window as a sequence: a gated
// recurrent unit over the WindowLen embeddings, oldest first, whose last
// state feeds one sigmoid output. Its three layers hold the input
// weights (3H×EmbedDim: reset, update and candidate gates), the
// recurrent weights (3H×H) and the output (1×H).
const ArchGRU = "gru"

func checkGRU(layers []Layer) error {
	if len(layers) != 3 {
		return errors.New("a GRU head has 3 layers")
	}
	h := layers[1].In
	want := [3][2]int{{EmbedDim, 3 * h}, {h, 3 * h}, {h, 1}}
	for i, l := range layers {
		if h < 1 || 3*h > maxWidth || l.In != want[i][0] || l.Out != want[i][1] || len(l.W) != l.In*l.Out || len(l.B) != l.Out {
			return errors.New("GRU head: shapes do not chain")
		}
	}
	return nil
}

// GRUStep advances state h by one input x: a and b are 3H scratch.
func GRUStep(wi, wh Layer, h, x, a, b []float32) {
	n := len(h)
	for o := range 3 * n {
		a[o] = wi.B[o] + f32.Dot(wi.W[o*wi.In:(o+1)*wi.In], x)
		b[o] = wh.B[o] + f32.Dot(wh.W[o*n:(o+1)*n], h)
	}
	for k := range n {
		r := sigm(a[k] + b[k])
		z := sigm(a[n+k] + b[n+k])
		c := float32(math.Tanh(float64(a[2*n+k] + r*b[2*n+k])))
		h[k] = (1-z)*c + z*h[k]
	}
}

func sigm(v float32) float32 { return float32(1 / (1 + math.Exp(-float64(v)))) }

func (h *Head) scoreGRU(s *headScratch, x []float32) float64 {
	wi, wh, wo := h.layers[0], h.layers[1], h.layers[2]
	st := s.h[:wh.In]
	clear(st)
	for t := range WindowLen {
		GRUStep(wi, wh, st, x[t*EmbedDim:(t+1)*EmbedDim], s.a, s.b)
	}
	return 1 / (1 + math.Exp(-float64(wo.B[0]+f32.Dot(wo.W, st))))
}
