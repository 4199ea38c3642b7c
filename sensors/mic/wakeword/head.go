package wakeword

import (
	"errors"
	"fmt"
	"math"

	"github.com/edgeagent/edgeagent/internal/f32"
)

// A Head is a small trained classifier over a window of WindowLen
// embeddings: fully connected layers with ReLU between them and a sigmoid
// at the end, whose output is the probability that the window ends with
// the wake phrase. It is trained per phrase by `edgeagent wakeword train`
// (package train/wakeword) over a frozen frontend, so that the frontend's
// knowledge of real speech carries over to any phrase.
//
// A Head is read-only once made and may be shared; each detector keeps its
// own scratch (headScratch).
type Head struct {
	Info   HeadInfo
	layers []Layer
}

// HeadInfo describes a head: what it detects, over which frontend, and the
// threshold its trainer chose (by the rule in docs/bench/wake-word.md).
type HeadInfo struct {
	Name      string  `json:"name"`   // the wake word's name: hey_robot
	Phrase    string  `json:"phrase"` // what is said: hey robot
	Frontend  string  `json:"frontend"`
	Threshold float64 `json:"threshold"`
	// Training is the trainer's record (recipe, seed, validation), JSON.
	Training string `json:"training,omitempty"`
}

// Layer is one fully connected layer: Out rows of In weights (row-major)
// and Out biases.
type Layer struct {
	In, Out int
	W, B    []float32
}

// maxWidth bounds a layer's width: heads are small by design, and a bound
// keeps a damaged file from asking for gigabytes.
const maxWidth = 4096

// NewHead checks the layers chain from a window of embeddings to one
// output and returns the head. The layers are used, not copied.
func NewHead(info HeadInfo, layers []Layer) (*Head, error) {
	if len(layers) == 0 || len(layers) > 8 {
		return nil, errors.New("a head has 1 to 8 layers")
	}
	if !(info.Threshold > 0 && info.Threshold < 1) {
		return nil, errors.New("head threshold outside (0, 1)")
	}
	in := WindowLen * EmbedDim
	for i, l := range layers {
		if l.In != in || l.Out < 1 || l.Out > maxWidth || len(l.W) != l.In*l.Out || len(l.B) != l.Out {
			return nil, fmt.Errorf("head layer %d: shapes do not chain", i+1)
		}
		for _, v := range l.W {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("head layer %d: weights are not finite", i+1)
			}
		}
		in = l.Out
	}
	if in != 1 {
		return nil, errors.New("a head's last layer has one output")
	}
	return &Head{Info: info, layers: layers}, nil
}

// Layers are the head's layers (shared, not copied: do not modify).
func (h *Head) Layers() []Layer { return h.layers }

// headScratch is one detector's working memory for a head.
type headScratch struct{ a, b []float32 }

func (h *Head) newScratch() *headScratch {
	w := 0
	for _, l := range h.layers {
		w = max(w, l.Out)
	}
	return &headScratch{a: make([]float32, w), b: make([]float32, w)}
}

// score runs the head on x (WindowLen×EmbedDim values, oldest embedding
// first) and returns the sigmoid of its output.
func (h *Head) score(s *headScratch, x []float32) float64 {
	in := x
	for i, l := range h.layers {
		out := s.a[:l.Out]
		if i%2 == 1 {
			out = s.b[:l.Out]
		}
		for o := range l.Out {
			out[o] = l.B[o] + f32.Dot(l.W[o*l.In:(o+1)*l.In], in)
		}
		if i < len(h.layers)-1 {
			for o, v := range out {
				out[o] = max(v, 0)
			}
		}
		in = out
	}
	return 1 / (1 + math.Exp(-float64(in[0])))
}

// Score is the head's probability for one window (WindowLen×EmbedDim
// values, oldest first), for tools and tests; detectors use their own
// scratch.
func (h *Head) Score(x []float32) float64 {
	if len(x) != WindowLen*EmbedDim {
		panic("wakeword: Head.Score needs WindowLen×EmbedDim values")
	}
	return h.score(h.newScratch(), x)
}
