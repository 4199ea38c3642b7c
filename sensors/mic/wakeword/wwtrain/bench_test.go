package wwtrain

import (
	"math/rand/v2"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// BenchmarkMixClip is the cost of one training clip: scene rendering
// (noise, babble, reverb, EQ) and the log-mel analysis.
func BenchmarkMixClip(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	sp := make([]int16, 12000)
	audio.NewNoise("pink", -20, 1).Fill(sp)
	babble := [][]int16{sp, sp, sp}
	ds := newDataset(1, 0)
	for b.Loop() {
		sc := randomScene(r)
		sc.noise, sc.reverb, sc.eq = "babble", true, true
		end := placeEnding(r, &sc, sp)
		ds.set(0, sc, babble, end)
	}
}

// BenchmarkTrainStep is one clip's forward and backward pass with the
// default network.
func BenchmarkTrainStep(b *testing.B) {
	cfg := DefaultConfig("hey robot")
	r := rand.New(rand.NewPCG(1, 1))
	net := newTCN(cfg.Channels, cfg.Kernel, cfg.Dilations, r)
	ds := newDataset(1, 0)
	for i := range ds.x {
		ds.x[i] = float32(r.NormFloat64())
	}
	for i := range ds.y {
		ds.y[i] = int8(r.IntN(2))
	}
	w := net.newWork(clipHops)
	g := make([]float32, len(net.params))
	for b.Loop() {
		backprop(net, w, g, ds, []int{0}, lossWeights{pos: 0.01, neg: 0.01, posClip: 1, negClip: 1, posFrame: 0.25}, nil, 1)
	}
}
