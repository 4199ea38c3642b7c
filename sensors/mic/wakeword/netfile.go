package wakeword

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"slices"
	"time"
)

// The model file:
//
//	"EAWW"                     magic
//	uint16 version             (netFileVersion)
//	uint32 n, n bytes          JSON header: name, phrase, shapes, offset, training config
//	float32 × count            weights, little-endian, tower by tower in the order of Net.weights
//	uint32                     CRC-32 (IEEE) of everything before it
//
// Version 1 (one tower: its layers and floor in the header's top level) is
// still read; version 2 lists the towers; version 3 adds the verifier's
// towers, whose weights follow the towers'. A model without a verifier is
// written as version 2, so that builds from before verifiers read it.
// The header carries the shapes, so the weight count is known before any
// weight is read, and a file whose length disagrees is refused before the
// checksum is even computed. Everything is checked at load time: a model
// that loads can run.

const (
	netMagic       = "EAWW"
	netFileVersion = 3
	maxHeader      = 1 << 16
	maxNetFile     = 8 << 20 // far above any model this format is for
)

type netHeader struct {
	Name        string          `json:"name"`
	Phrase      string          `json:"phrase"`
	Mels        int             `json:"mels"`
	Towers      []towerHeader   `json:"towers,omitempty"`   // version 2
	Verifier    []towerHeader   `json:"verifier,omitempty"` // version 3
	Offset      float32         `json:"offset"`
	Smooth      int             `json:"smooth_hops,omitempty"` // absent: the default
	Created     time.Time       `json:"created"`
	Training    json.RawMessage `json:"training,omitempty"`
	towerHeader                 // version 1: the one tower
}

type towerHeader struct {
	Layers   []layerHeader `json:"layers,omitempty"`
	LogFloor float32       `json:"log_floor,omitempty"` // absent: no floor
}

type layerHeader struct {
	In       int `json:"in"`
	Out      int `json:"out"`
	Kernel   int `json:"kernel"`
	Dilation int `json:"dilation"`
}

// WriteNet writes n in the model file format.
func WriteNet(w io.Writer, n *Net) error {
	if err := n.validate(); err != nil {
		return fmt.Errorf("wake word model: %w", err)
	}
	h := netHeader{Name: n.Name, Phrase: n.Phrase, Mels: Mels, Offset: n.Offset, Smooth: n.Smooth, Created: n.Created.UTC()}
	if n.Training != "" {
		if !json.Valid([]byte(n.Training)) {
			return errors.New("wake word model: training record is not JSON")
		}
		h.Training = json.RawMessage(n.Training)
	}
	h.Towers, h.Verifier = towerHeaders(n.Towers), towerHeaders(n.Verifier)
	version := uint16(2)
	if len(n.Verifier) > 0 {
		version = 3
	}
	hb, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if len(hb) > maxHeader {
		return fmt.Errorf("wake word model: header of %d bytes (max %d)", len(hb), maxHeader)
	}
	var b bytes.Buffer
	b.WriteString(netMagic)
	binary.Write(&b, binary.LittleEndian, version)
	binary.Write(&b, binary.LittleEndian, uint32(len(hb)))
	b.Write(hb)
	for _, v := range n.weights() {
		binary.Write(&b, binary.LittleEndian, v)
	}
	binary.Write(&b, binary.LittleEndian, crc32.ChecksumIEEE(b.Bytes()))
	_, err = w.Write(b.Bytes())
	return err
}

func towerHeaders(ts []Tower) []towerHeader {
	var out []towerHeader
	for _, t := range ts {
		th := towerHeader{LogFloor: t.LogFloor}
		for _, l := range t.Layers {
			th.Layers = append(th.Layers, layerHeader{l.In, l.Out, l.Kernel, l.Dilation})
		}
		out = append(out, th)
	}
	return out
}

// weights lists the weight slices in file order.
func (n *Net) weights() [][]float32 {
	var out [][]float32
	for _, t := range slices.Concat(n.Towers, n.Verifier) {
		out = append(out, t.Mean, t.Std)
		for _, l := range t.Layers {
			out = append(out, l.W, l.B)
		}
		out = append(out, t.OutW, []float32{t.OutB})
	}
	return out
}

// ErrBadModel is wrapped by every error about a model file's content.
var ErrBadModel = errors.New("not a valid wake word model")

// ReadNet parses a model file. Any defect — wrong magic or version, a
// truncated or padded file, a checksum mismatch, impossible shapes or
// non-finite weights — is an error wrapping ErrBadModel.
func ReadNet(r io.Reader) (*Net, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxNetFile+1))
	if err != nil {
		return nil, err
	}
	return parseNet(b)
}

func parseNet(b []byte) (*Net, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrBadModel, fmt.Sprintf(format, a...))
	}
	if len(b) > maxNetFile {
		return nil, bad("larger than %d bytes", maxNetFile)
	}
	if len(b) < 4+2+4+4 || string(b[:4]) != netMagic {
		return nil, bad("no model header (the file should start with %q)", netMagic)
	}
	v := binary.LittleEndian.Uint16(b[4:6])
	if v < 1 || v > netFileVersion {
		return nil, bad("format version %d, this build reads versions 1 to %d", v, netFileVersion)
	}
	hl := int(binary.LittleEndian.Uint32(b[6:10]))
	if hl > maxHeader || 10+hl+4 > len(b) {
		return nil, bad("truncated header")
	}
	var h netHeader
	if err := json.Unmarshal(b[10:10+hl], &h); err != nil {
		return nil, bad("header does not parse")
	}
	if h.Mels != Mels {
		return nil, bad("model reads %d mel bands, this build computes %d", h.Mels, Mels)
	}
	switch {
	case v == 1 && len(h.Towers) == 0:
		h.Towers = []towerHeader{h.towerHeader}
	case v == 1 || len(h.towerHeader.Layers) > 0 || h.towerHeader.LogFloor != 0 || v == 2 && len(h.Verifier) > 0 || v == 3 && len(h.Verifier) == 0:
		return nil, bad("version %d header with the other version's fields", v)
	}
	if len(h.Towers) == 0 || len(h.Towers) > MaxTowers || len(h.Verifier) > MaxTowers {
		return nil, bad("%d towers and %d verifier towers", len(h.Towers), len(h.Verifier))
	}
	count := 0
	for ti, t := range slices.Concat(h.Towers, h.Verifier) {
		if len(t.Layers) == 0 || len(t.Layers) > maxLayers {
			return nil, bad("tower %d: %d layers", ti, len(t.Layers))
		}
		count += 2*Mels + 1
		last := Mels
		for i, l := range t.Layers {
			if l.In < 1 || l.In > maxChannels || l.Out < 1 || l.Out > maxChannels || l.Kernel < 1 || l.Kernel > maxKernel {
				return nil, bad("tower %d: layer %d has an impossible shape", ti, i)
			}
			count += l.Kernel*l.Out*l.In + l.Out
			last = l.Out
		}
		count += last
	}
	if want := 10 + hl + 4*count + 4; len(b) != want {
		return nil, bad("%d bytes, the header's shapes need %d (truncated or padded)", len(b), want)
	}
	body := b[:len(b)-4]
	if crc32.ChecksumIEEE(body) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil, bad("checksum mismatch (the file is corrupt)")
	}
	p := body[10+hl:]
	take := func(k int) []float32 {
		v := make([]float32, k)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(p[4*i:]))
		}
		p = p[4*k:]
		return v
	}
	n := &Net{Name: h.Name, Phrase: h.Phrase, Offset: h.Offset, Smooth: h.Smooth, Created: h.Created, Training: string(h.Training)}
	towers := func(ths []towerHeader) []Tower {
		var out []Tower
		for _, th := range ths {
			t := Tower{LogFloor: th.LogFloor, Mean: take(Mels), Std: take(Mels)}
			for _, l := range th.Layers {
				t.Layers = append(t.Layers, Conv{In: l.In, Out: l.Out, Kernel: l.Kernel, Dilation: l.Dilation,
					W: take(l.Kernel * l.Out * l.In), B: take(l.Out)})
			}
			t.OutW = take(t.Layers[len(t.Layers)-1].Out)
			t.OutB = take(1)[0]
			out = append(out, t)
		}
		return out
	}
	n.Towers = towers(h.Towers)
	n.Verifier = towers(h.Verifier)
	if !validName.MatchString(n.Name) {
		return nil, bad("wake word name %q", n.Name)
	}
	if err := n.validate(); err != nil {
		return nil, bad("%v", err)
	}
	return n, nil
}

// LoadNet reads a model file.
func LoadNet(path string) (*Net, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n, err := ReadNet(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// SaveNet writes a model file atomically.
func SaveNet(path string, n *Net) error {
	var b bytes.Buffer
	if err := WriteNet(&b, n); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
