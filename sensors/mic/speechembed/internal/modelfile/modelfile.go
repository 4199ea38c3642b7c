// Package modelfile is the speech embedding's weight file: named float32
// tensors with their shapes, a format version and a SHA-256 of the whole,
// so a damaged or foreign file is refused before any of it is used.
//
// Layout (little-endian):
//
//	"EASPEMB\n"  magic, 8 bytes
//	uint32       version (2)
//	uint32       tensor count
//	per tensor:  uint16 name length, name, uint8 rank, uint32 dims…,
//	             zero bytes up to a multiple of 4 from the file's start, float32 values…
//	[32]byte     SHA-256 of everything before it
//
// The values are aligned (version 2; version 1 was packed) so that a file
// held in memory at an aligned address is read in place: the binary's
// embedded copy then stays in its read-only, file-backed pages instead
// of being copied into 1.35 MB of heap (anonymous memory).
package modelfile

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/edgeagent/edgeagent/internal/f32"
)

// Version is the format version this package writes and reads.
const Version = 2

const magic = "EASPEMB\n"

// Tensor is one named float32 array.
type Tensor struct {
	Name string
	Dims []int
	Data []float32
}

// Encode serialises tensors in order.
func Encode(ts []Tensor) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(magic)
	le := binary.LittleEndian
	b.Write(le.AppendUint32(nil, Version))
	b.Write(le.AppendUint32(nil, uint32(len(ts))))
	for _, t := range ts {
		n := 1
		for _, d := range t.Dims {
			n *= d
		}
		if n != len(t.Data) || len(t.Name) > 255 || len(t.Dims) > 8 {
			return nil, fmt.Errorf("modelfile: tensor %q: shape does not match its data", t.Name)
		}
		b.Write(le.AppendUint16(nil, uint16(len(t.Name))))
		b.WriteString(t.Name)
		b.WriteByte(byte(len(t.Dims)))
		for _, d := range t.Dims {
			b.Write(le.AppendUint32(nil, uint32(d)))
		}
		for b.Len()%4 != 0 {
			b.WriteByte(0)
		}
		for _, v := range t.Data {
			b.Write(le.AppendUint32(nil, math.Float32bits(v)))
		}
	}
	sum := sha256.Sum256(b.Bytes())
	b.Write(sum[:])
	return b.Bytes(), nil
}

// ErrDamaged means the bytes are not an intact model file. Its message
// never quotes the file.
var ErrDamaged = errors.New("not an intact speech embedding model file")

// Decode checks the magic, version and checksum, then returns the tensors
// by name. Where b's values are aligned in memory (and the machine is
// little-endian) a tensor's Data is b itself, not a copy: it must be
// treated as read-only, and b kept unchanged, for as long as it is used.
func Decode(b []byte) (map[string]Tensor, error) {
	if len(b) < len(magic)+8+sha256.Size || string(b[:len(magic)]) != magic {
		return nil, fmt.Errorf("%w (wrong magic or too short)", ErrDamaged)
	}
	body, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if got := sha256.Sum256(body); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("%w (checksum mismatch)", ErrDamaged)
	}
	le := binary.LittleEndian
	p := body[len(magic):]
	if v := le.Uint32(p); v != Version {
		return nil, fmt.Errorf("model file format version %d, this build reads %d", v, Version)
	}
	count := le.Uint32(p[4:])
	p = p[8:]
	out := make(map[string]Tensor, count)
	for i := range count {
		t, rest, err := decodeTensor(p, len(b)-len(p))
		if err != nil {
			return nil, fmt.Errorf("%w (tensor %d: %v)", ErrDamaged, i, err)
		}
		if _, dup := out[t.Name]; dup {
			return nil, fmt.Errorf("%w (tensor %d: duplicate name)", ErrDamaged, i)
		}
		out[t.Name] = t
		p = rest
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("%w (trailing bytes)", ErrDamaged)
	}
	return out, nil
}

var errShort = errors.New("truncated")

// decodeTensor reads the tensor at p, which starts off bytes into the file.
func decodeTensor(p []byte, off int) (Tensor, []byte, error) {
	le := binary.LittleEndian
	if len(p) < 2 {
		return Tensor{}, nil, errShort
	}
	nl := int(le.Uint16(p))
	p = p[2:]
	if len(p) < nl+1 {
		return Tensor{}, nil, errShort
	}
	t := Tensor{Name: string(p[:nl])}
	rank := int(p[nl])
	p = p[nl+1:]
	if rank > 8 || len(p) < 4*rank {
		return Tensor{}, nil, errShort
	}
	n := 1
	for range rank {
		d := int(le.Uint32(p))
		p = p[4:]
		if d <= 0 || d > 1<<24 || n > (1<<26)/d {
			return Tensor{}, nil, errors.New("dimension out of range")
		}
		n *= d
		t.Dims = append(t.Dims, d)
	}
	pad := (4 - (off+2+nl+1+4*rank)%4) % 4
	if len(p) < pad+4*n {
		return Tensor{}, nil, errShort
	}
	for _, z := range p[:pad] {
		if z != 0 {
			return Tensor{}, nil, errors.New("padding is not zero")
		}
	}
	t.Data = f32.LE(p[pad : pad+4*n]) // ≥ 1 value: every dimension is
	return t, p[pad+4*n:], nil
}
