package speechembed

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// The fixtures are onnxruntime's outputs on the two ONNX files for the
// clips beside them (scripts/speechembed-reference.sh made them).
var clips = []string{"speech_clean", "speech_noise"}

type reference struct {
	frames     [][]float32 // [frame][32]
	embeddings [][]float32 // [embedding][96]
}

func readReference(t *testing.T, name string) reference {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name+".ref"))
	if err != nil {
		t.Fatal(err)
	}
	nf, ne := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	vals := b[8:]
	if len(vals) != 4*(nf*mels+ne*EmbeddingSize) {
		t.Fatalf("%s.ref: size does not match its header", name)
	}
	next := func(n int) []float32 {
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(vals[4*i:]))
		}
		vals = vals[4*n:]
		return out
	}
	var r reference
	for range nf {
		r.frames = append(r.frames, next(mels))
	}
	for range ne {
		r.embeddings = append(r.embeddings, next(EmbeddingSize))
	}
	return r
}

func readClip(t *testing.T, name string) []int16 {
	t.Helper()
	s, err := audio.ReadWAVFile(filepath.Join("testdata", name+".wav"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// within: |got − want| ≤ 1e-4 · max(|want|, 1). The floor keeps values near
// zero from demanding more than float32 sums of a different order give.
func within(got, want float32) bool {
	return math.Abs(float64(got-want)) <= 1e-4*math.Max(math.Abs(float64(want)), 1)
}

func TestMatchesOnnxruntime(t *testing.T) {
	f := mustNew(t)
	for _, name := range clips {
		t.Run(name, func(t *testing.T) {
			ref := readReference(t, name)
			var frames [][]float32
			var embs [][EmbeddingSize]float32
			s := f.NewStream()
			s.onMel = func(fr []float32) {
				for i := 0; i < len(fr); i += mels {
					frames = append(frames, append([]float32(nil), fr[i:i+mels]...))
				}
			}
			s.Write(readClip(t, name), func(e *[EmbeddingSize]float32) { embs = append(embs, *e) })
			compare(t, "feature", frames, ref.frames)
			got := make([][]float32, len(embs))
			for i := range embs {
				got[i] = embs[i][:]
			}
			compare(t, "embedding", got, ref.embeddings)
		})
	}
}

func compare(t *testing.T, what string, got, want [][]float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d %ss, onnxruntime gave %d", len(got), what, len(want))
	}
	worst, bad := 0.0, 0
	for i := range want {
		for j := range want[i] {
			d := math.Abs(float64(got[i][j]-want[i][j])) / math.Max(math.Abs(float64(want[i][j])), 1)
			worst = max(worst, d)
			if !within(got[i][j], want[i][j]) {
				if bad < 5 {
					t.Errorf("%s %d[%d] = %v, onnxruntime %v", what, i, j, got[i][j], want[i][j])
				}
				bad++
			}
		}
	}
	t.Logf("%ss: worst relative difference %.2g over %d×%d", what, worst, len(want), len(want[0]))
	if bad > 0 {
		t.Errorf("%d %s values differ by more than 1e-4", bad, what)
	}
}

func mustNew(t testing.TB) *Frontend {
	t.Helper()
	f, err := New()
	if err != nil {
		t.Fatal(err)
	}
	return f
}
