package wakeword

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzReadNet: a model file is whatever a board's wakeword.model names.
// Any bytes give a model that runs or an error wrapping ErrBadModel, never
// a panic. The checksum is recomputed over the mutated bytes, so the
// fuzzer reaches the header and shape checks behind it instead of
// stopping at a checksum mismatch.
func FuzzReadNet(f *testing.F) {
	for _, n := range []*Net{randomNet(21), towersNet(22, 2), verifiedNet(23)} {
		var b bytes.Buffer
		if err := WriteNet(&b, n); err != nil {
			f.Fatal(err)
		}
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 14 {
			b = bytes.Clone(b)
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		}
		n, err := ReadNet(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrBadModel) {
				t.Fatalf("error not wrapping ErrBadModel: %v", err)
			}
			return
		}
		st := newNetState(n)
		mel := make([]float64, Mels)
		for i := range 8 {
			mel[i%Mels] = float64(-i)
			st.step(mel)
		}
	})
}
