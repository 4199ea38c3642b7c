package speechembed

import (
	_ "embed" // the weights
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
)

// The weights ship inside the binary (see weights/README.md for where they
// come from and their licence). As a string they stay in the executable's
// read-only data, and the network reads them there (the model file's
// values are aligned and in the order the convolutions read): file-backed
// pages the kernel shares and can drop, instead of 1.35 MB of heap. A
// checkout without the file does not compile; run
// scripts/fetch-wakeword-frontend.sh.
//
//go:embed weights/speech_embedding.bin
var builtin string

const modelPath = "weights/speech_embedding.bin"

// Frontend holds the converted weights; it is read-only and safe for
// concurrent use. Each audio stream needs its own Stream.
type Frontend struct {
	mel    *melBank
	layers []layer
}

// New returns the frontend built into the binary. The weights are checked
// once per process and shared.
func New() (*Frontend, error) { return loadEmbedded() }

var loadEmbedded = sync.OnceValues(func() (*Frontend, error) {
	// A view of the string's bytes, not a copy: nothing writes to it
	// (writing would fault: the pages are read-only).
	return loadBuiltin(unsafe.Slice(unsafe.StringData(builtin), len(builtin)))
})

// loadBuiltin loads the embedded model file; its error says how to make
// the file again.
func loadBuiltin(b []byte) (*Frontend, error) {
	f, err := load(b)
	if err != nil {
		return nil, fmt.Errorf("speechembed: built-in %s: %w; run scripts/fetch-wakeword-frontend.sh, then rebuild", modelPath, err)
	}
	return f, nil
}

// load decodes a model file and checks that it holds every tensor the
// architecture needs, with the right shape. The frontend may use b's
// bytes in place: b must not change afterwards.
func load(b []byte) (*Frontend, error) {
	ts, err := modelfile.Decode(b)
	if err != nil {
		return nil, err
	}
	want := map[string][]int{
		modelfile.WindowName:  {fftSize},
		modelfile.FiltersName: {modelfile.Bins, mels},
	}
	ci := 0
	for _, op := range modelfile.Arch {
		if op.Cout != 0 {
			want[modelfile.WeightName(ci)] = []int{op.KH, op.KW, op.Cin, op.Cout}
			want[modelfile.BiasName(ci)] = []int{op.Cout}
			ci++
		}
	}
	for name, dims := range want {
		t, ok := ts[name]
		if !ok {
			return nil, fmt.Errorf("model file lacks tensor %s", name)
		}
		if !slices.Equal(t.Dims, dims) {
			return nil, fmt.Errorf("model file tensor %s has the wrong shape", name)
		}
	}
	if len(ts) != len(want) {
		return nil, errors.New("model file has tensors this build does not know")
	}
	return &Frontend{
		mel:    newMelBank(ts[modelfile.WindowName].Data, ts[modelfile.FiltersName].Data),
		layers: buildLayers(ts),
	}, nil
}

// Embed returns the embeddings of a whole clip: one per complete hop from
// the 10th on (the first needs 0.8 s of audio). It is a Stream fed the clip
// in one write, so it equals what a stream gives for the same samples.
func (f *Frontend) Embed(samples []int16) [][EmbeddingSize]float32 {
	var out [][EmbeddingSize]float32
	f.NewStream().Write(samples, func(e *[EmbeddingSize]float32) { out = append(out, *e) })
	return out
}
