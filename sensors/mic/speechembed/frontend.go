package speechembed

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
)

// The weights ship inside the binary (see weights/README.md for where they
// come from and their licence). The directory always holds the README, so
// a checkout without the model file still compiles and New says what to do.
//
//go:embed weights
var weightsFS embed.FS

const modelPath = "weights/speech_embedding.bin"

// Frontend holds the converted weights; it is read-only and safe for
// concurrent use. Each audio stream needs its own Stream.
type Frontend struct {
	mel    *melBank
	layers []layer
}

// New returns the frontend built into the binary. The weights are decoded
// once per process and shared.
func New() (*Frontend, error) { return loadEmbedded() }

var loadEmbedded = sync.OnceValues(func() (*Frontend, error) { return loadFS(weightsFS) })

// loadFS loads the model file from fsys (the embedded weights directory).
func loadFS(fsys fs.FS) (*Frontend, error) {
	b, err := fs.ReadFile(fsys, modelPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errors.New("speechembed: this build has no " + modelPath +
			": run scripts/fetch-wakeword-frontend.sh, then rebuild")
	}
	if err != nil {
		return nil, fmt.Errorf("speechembed: %w", err)
	}
	f, err := load(b)
	if err != nil {
		return nil, fmt.Errorf("speechembed: built-in %s: %w; run scripts/fetch-wakeword-frontend.sh, then rebuild", modelPath, err)
	}
	return f, nil
}

// load decodes a model file and checks that it holds every tensor the
// architecture needs, with the right shape.
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
			want[modelfile.WeightName(ci)] = []int{op.Cout, op.Cin, op.KH, op.KW}
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
