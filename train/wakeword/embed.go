package wakeword

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"math"
	"os"
	"path/filepath"

	ww "github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// embedded is a clip run through a fresh frontend: its embeddings and,
// for each, the sample at which the frontend completed it.
type embedded struct {
	e   []ww.Embedding
	end []int32
}

// embedClip runs x through fe from a reset, a hop at a time, so each
// embedding's time is known whatever the frontend's own latency. Results
// are cached under dir by the clip's content and the frontend's name: a
// rerun with another seed or head reuses every clip that coincides.
func embedClip(fe ww.Frontend, feID, dir string, x []int16) embedded {
	p := ""
	if dir != "" {
		h := sha1.New()
		h.Write([]byte(feID))
		binary.Write(h, binary.LittleEndian, x)
		p = filepath.Join(dir, hex.EncodeToString(h.Sum(nil)[:10])+".emb")
		if em, ok := readEmbedded(p); ok {
			return em
		}
	}
	fe.Reset()
	var em embedded
	var buf []ww.Embedding
	for h := 0; h+ww.HopSamples <= len(x); h += ww.HopSamples {
		buf = fe.Push(buf[:0], x[h:h+ww.HopSamples])
		for _, e := range buf {
			em.e = append(em.e, e)
			em.end = append(em.end, int32(h+ww.HopSamples))
		}
	}
	if p != "" {
		writeEmbedded(p, em)
	}
	return em
}

// The cache file: uint32 count, then per embedding its end sample and
// EmbedDim float32s, little-endian. A file that does not parse is a miss.
func readEmbedded(p string) (embedded, bool) {
	b, err := os.ReadFile(p)
	if err != nil || len(b) < 4 {
		return embedded{}, false
	}
	n := int(binary.LittleEndian.Uint32(b))
	rec := 4 + 4*ww.EmbedDim
	if len(b) != 4+n*rec {
		return embedded{}, false
	}
	em := embedded{e: make([]ww.Embedding, n), end: make([]int32, n)}
	for i := range n {
		o := 4 + i*rec
		em.end[i] = int32(binary.LittleEndian.Uint32(b[o:]))
		for k := range ww.EmbedDim {
			em.e[i][k] = math.Float32frombits(binary.LittleEndian.Uint32(b[o+4+4*k:]))
		}
	}
	return em, true
}

func writeEmbedded(p string, em embedded) {
	b := binary.LittleEndian.AppendUint32(nil, uint32(len(em.e)))
	for i, e := range em.e {
		b = binary.LittleEndian.AppendUint32(b, uint32(em.end[i]))
		for _, v := range e {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		}
	}
	// A cache is an optimisation: a failed write costs a recomputation.
	_ = writeAtomic(p, b)
}

// writeAtomic writes a cache file through a temporary file of its own
// and a rename: a reader never sees half of it.
func writeAtomic(p string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(p), ".cache-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// window flattens the WindowLen embeddings ending with index j (oldest
// first) into dst.
func (em embedded) window(dst []float32, j int) []float32 {
	for k := j + 1 - ww.WindowLen; k <= j; k++ {
		dst = append(dst, em.e[k][:]...)
	}
	return dst
}
