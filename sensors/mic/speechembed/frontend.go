package speechembed

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
)

// The weights (see weights/README.md for where they come from and their
// licence) are read where they lie, never copied: the model file's values
// are aligned and in the order the convolutions read. The full build
// embeds them (weights_embedded.go), and they stay in the executable's
// read-only data; the robot profile maps the same file from beside the
// binary (weights_beside.go), which keeps 1.35 MB out of the binary its
// size budget counts. Either way they are file-backed pages the kernel
// shares and can drop, not heap. A checkout without the file does not
// compile; run scripts/fetch-wakeword-frontend.sh.
const (
	// WeightsFile is the model file's name, in weights/ and beside a
	// robot-profile binary (internal/datafile).
	WeightsFile = "speech_embedding.bin"
	// WeightsSHA256 is the SHA-256 the model file carries in its last 32
	// bytes, of everything before them, which the decoder verifies. A
	// robot-profile binary refuses a file beside it that carries another:
	// comparing these 32 bytes instead of hashing the file again saves
	// 1.35 MB of hashing before ready (~33 ms on a CPU without SHA
	// instructions). TestWeightsDigest keeps it current.
	WeightsSHA256 = "e730a36080826ec6be4830214e4d682a46f3dec7bfe5a510f1c2a5b64436edf2"
)

const modelPath = "weights/" + WeightsFile

// Frontend holds the converted weights; it is read-only and safe for
// concurrent use. Each audio stream needs its own Stream.
type Frontend struct {
	mel    *melBank
	layers []layer
}

// New returns the product's frontend, with the weights the binary ships
// (embedded, or beside a robot-profile binary). They are checked once per
// process and shared.
func New() (*Frontend, error) { return loadShipped() }

var loadShipped = sync.OnceValues(func() (*Frontend, error) {
	b, err := builtinWeights()
	if err != nil {
		return nil, fmt.Errorf("speechembed: %w", err)
	}
	return loadBuiltin(b)
})

// loadBuiltin loads the embedded model file; its error says how to make
// the file again.
func loadBuiltin(b []byte) (*Frontend, error) {
	f, err := load(b)
	if err != nil {
		return nil, fmt.Errorf("speechembed: built-in %s: %w; run scripts/fetch-wakeword-frontend.sh, then rebuild "+
			"(a robot-profile binary: copy the edgeagent-data directory built with it)", modelPath, err)
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
