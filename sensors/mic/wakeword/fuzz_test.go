package wakeword

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"
)

// FuzzReadHead: a head file is whatever a board's wakeword.model names.
// Any bytes give a head that runs or an error wrapping ErrBadModel, never
// a panic. The checksum is recomputed over the mutated bytes, so the
// fuzzer reaches the header and shape checks behind it.
func FuzzReadHead(f *testing.F) {
	in := WindowLen * EmbedDim
	h, err := NewHead(HeadInfo{Name: "x", Threshold: 0.5}, []Layer{
		{In: in, Out: 2, W: make([]float32, 2*in), B: []float32{1, 2}}, {In: 2, Out: 1, W: []float32{1, -1}, B: []float32{0}}})
	if err != nil {
		f.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHead(&b, h); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) >= 14 {
			b = bytes.Clone(b)
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.ChecksumIEEE(b[:len(b)-4]))
		}
		h, err := ReadHead(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrBadModel) {
				t.Fatalf("error not wrapping ErrBadModel: %v", err)
			}
			return
		}
		h.Score(make([]float32, WindowLen*EmbedDim))
	})
}
