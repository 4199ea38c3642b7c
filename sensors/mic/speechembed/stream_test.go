package speechembed

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/speechembed/internal/modelfile"
)

// A stream fed in blocks of any size gives exactly what Embed gives for
// the whole clip.
func TestStreamEqualsBatch(t *testing.T) {
	f := mustNew(t)
	clip := readClip(t, "speech_noise")
	batch := f.Embed(clip)
	if len(batch) != len(clip)/HopSamples-FirstHop+1 {
		t.Fatalf("%d embeddings for %d samples", len(batch), len(clip))
	}
	for _, block := range []int{1, 1000, 4097} {
		s := f.NewStream()
		var got [][EmbeddingSize]float32
		for i := 0; i < len(clip); i += block {
			s.Write(clip[i:min(i+block, len(clip))], func(e *[EmbeddingSize]float32) { got = append(got, *e) })
		}
		if len(got) != len(batch) {
			t.Fatalf("block %d: %d embeddings, batch %d", block, len(got), len(batch))
		}
		for i := range got {
			if got[i] != batch[i] {
				t.Fatalf("block %d: embedding %d differs from batch", block, i)
			}
		}
	}
}

func TestWriteFloatMatchesInt16(t *testing.T) {
	f := mustNew(t)
	clip := readClip(t, "speech_noise")
	fl := make([]float32, len(clip))
	for i, v := range clip {
		fl[i] = float32(v) / 32768
	}
	var got [][EmbeddingSize]float32
	f.NewStream().WriteFloat(fl, func(e *[EmbeddingSize]float32) { got = append(got, *e) })
	want := f.Embed(clip)
	if len(got) != len(want) {
		t.Fatalf("%d embeddings, int16 gave %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("embedding %d differs from the int16 path", i)
		}
	}
}

func TestResetStartsOver(t *testing.T) {
	f := mustNew(t)
	clip := readClip(t, "speech_noise")
	s := f.NewStream()
	s.Write(clip[:len(clip)/2], func(*[EmbeddingSize]float32) {})
	s.Reset()
	var got [][EmbeddingSize]float32
	s.Write(clip, func(e *[EmbeddingSize]float32) { got = append(got, *e) })
	want := f.Embed(clip)
	if len(got) != len(want) || got[0] != want[0] || got[len(got)-1] != want[len(want)-1] {
		t.Fatal("a reset stream does not match a new one")
	}
}

func TestStreamSteadyStateDoesNotAllocate(t *testing.T) {
	f := mustNew(t)
	s := f.NewStream()
	clip := readClip(t, "speech_noise")
	n := 0
	emit := func(*[EmbeddingSize]float32) { n++ }
	var sized []int
	for _, a := range s.acts {
		sized = append(sized, len(a.data))
	}
	s.Write(clip, emit)
	for i, a := range s.acts {
		if len(a.data) != sized[i] {
			t.Errorf("activation %d grew from %d to %d floats: NewStream sized it too small", i, sized[i], len(a.data))
		}
	}
	hop := clip[:HopSamples]
	allocs := testing.AllocsPerRun(5, func() { s.Write(hop, emit) })
	if allocs != 0 {
		t.Fatalf("%v allocations per hop", allocs)
	}
	if n == 0 {
		t.Fatal("no embeddings")
	}
}

func TestLoadRefusesDamagedFiles(t *testing.T) {
	shipped, err := builtinWeights()
	if err != nil {
		t.Fatal(err)
	}
	good := bytes.Clone(shipped)
	if _, err := load(good); err != nil {
		t.Fatalf("the built-in model: %v", err)
	}
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 1
	cases := map[string][]byte{
		"empty":     nil,
		"truncated": good[:len(good)-100],
		"bit flip":  flipped,
		"foreign":   []byte("secret-looking content that must not be echoed, long enough to pass the size check"),
	}
	for name, b := range cases {
		_, err := load(b)
		if !errors.Is(err, modelfile.ErrDamaged) {
			t.Errorf("%s: err = %v, want ErrDamaged", name, err)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error echoes the file: %v", name, err)
		}
	}
	// Intact file, wrong tensors: refused by name, not by content.
	odd, err := modelfile.Encode([]modelfile.Tensor{{Name: "x", Dims: []int{1}, Data: []float32{1}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := load(odd); err == nil || !strings.Contains(err.Error(), "lacks tensor") {
		t.Errorf("a file of other tensors: err = %v", err)
	}
}

// A damaged built-in file says how to make it again, without quoting it.
func TestDamagedModelSaysHowToFetch(t *testing.T) {
	_, err := loadBuiltin([]byte("not a model file, but long enough for the header check"))
	if err == nil || !strings.Contains(err.Error(), "scripts/fetch-wakeword-frontend.sh") {
		t.Errorf("err = %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "long enough") {
		t.Errorf("the error echoes the file: %v", err)
	}
}
