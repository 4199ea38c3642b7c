package wakeword

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"

	"github.com/edgeagent/edgeagent/internal/f32"
)

// The head file:
//
//	"EAWH"              magic
//	uint16 version      (headFileVersion)
//	uint32 n, n bytes   JSON header: HeadInfo and the layers' shapes, padded
//	                    with spaces so that the weights start at a multiple
//	                    of 4 bytes (files written before are not: they are
//	                    read by copying)
//	float32 × count     weights then biases, layer by layer, little-endian
//	uint32              CRC-32 (IEEE) of everything before it
//
// The header carries the shapes, so the file's length is known before a
// weight is read; a file whose length disagrees, or whose checksum does
// not match, is refused. Errors say what is wrong, never what the file
// holds.
//
// The weights of an aligned file held in memory at an aligned address
// are used where they lie (decodeHead), as the speech frontend's are: the
// built-in head stays in the binary's read-only, file-backed pages instead
// of 0.38 MB of heap.

const (
	headMagic       = "EAWH"
	headFileVersion = 1
	maxHeadHeader   = 1 << 16
	maxHeadFile     = 16 << 20
)

type headHeader struct {
	HeadInfo
	Shapes [][2]int `json:"shapes"` // [in, out] per layer
}

// ErrBadModel is wrapped by every error of ReadHead about the file's
// content (not about reading it).
var ErrBadModel = errors.New("not a usable wake-word head")

func bad(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadModel}, a...)...)
}

// WriteHead writes h in the head file format.
func WriteHead(w io.Writer, h *Head) error {
	if h.Info.Training != "" && !json.Valid([]byte(h.Info.Training)) {
		return errors.New("wake word head: training record is not JSON")
	}
	hd := headHeader{HeadInfo: h.Info}
	for _, l := range h.layers {
		hd.Shapes = append(hd.Shapes, [2]int{l.In, l.Out})
	}
	js, err := json.Marshal(hd)
	if err != nil {
		return err
	}
	for (10+len(js))%4 != 0 {
		js = append(js, ' ')
	}
	if len(js) > maxHeadHeader {
		return errors.New("wake word head: header too long")
	}
	var b bytes.Buffer
	b.WriteString(headMagic)
	binary.Write(&b, binary.LittleEndian, uint16(headFileVersion))
	binary.Write(&b, binary.LittleEndian, uint32(len(js)))
	b.Write(js)
	for _, l := range h.layers {
		binary.Write(&b, binary.LittleEndian, l.W)
		binary.Write(&b, binary.LittleEndian, l.B)
	}
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE(b.Bytes()))
	_, err = w.Write(b.Bytes())
	return err
}

// ReadHead reads and checks a head file.
func ReadHead(r io.Reader) (*Head, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxHeadFile+1))
	if err != nil {
		return nil, err
	}
	return decodeHead(data)
}

// decodeHead checks a head file held in data. The head's weights are data
// itself where they are aligned (f32.LE): data must not change while the
// head is used.
func decodeHead(data []byte) (*Head, error) {
	if len(data) > maxHeadFile {
		return nil, bad("file too large")
	}
	if len(data) < 4 || string(data[:4]) != headMagic {
		return nil, bad("not a head file (a model of the older from-scratch format? retrain with edgeagent wakeword train)")
	}
	if len(data) < 14 {
		return nil, bad("file cut short")
	}
	if v := binary.LittleEndian.Uint16(data[4:]); v != headFileVersion {
		return nil, bad("format version %d, this build reads %d (retrain, or use a matching edgeagent)", v, headFileVersion)
	}
	n := int(binary.LittleEndian.Uint32(data[6:]))
	if n > maxHeadHeader || 10+n+4 > len(data) {
		return nil, bad("header length out of range")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	var hd headHeader
	if err := json.Unmarshal(data[10:10+n], &hd); err != nil {
		return nil, bad("header is not valid JSON")
	}
	count := 0
	for _, s := range hd.Shapes {
		if s[0] < 1 || s[0] > WindowLen*EmbedDim || s[1] < 1 || s[1] > maxWidth {
			return nil, bad("layer shape out of range")
		}
		count += s[0]*s[1] + s[1]
	}
	if len(body) != 10+n+4*count {
		return nil, bad("file length does not match its layers (cut short or padded)")
	}
	if crc32.ChecksumIEEE(body) != sum {
		return nil, bad("checksum mismatch (the file is damaged)")
	}
	off := 10 + n
	next := func(k int) []float32 {
		out := f32.LE(data[off : off+4*k])
		off += 4 * k
		return out
	}
	layers := make([]Layer, len(hd.Shapes))
	for i, s := range hd.Shapes {
		layers[i] = Layer{In: s[0], Out: s[1]}
		layers[i].W = next(s[0] * s[1])
		layers[i].B = next(s[1])
	}
	h, err := NewHead(hd.HeadInfo, layers)
	if err != nil {
		return nil, bad("%v", err)
	}
	return h, nil
}

// LoadHead reads the head file at path.
func LoadHead(path string) (*Head, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h, err := ReadHead(bufio.NewReader(f))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return h, nil
}
