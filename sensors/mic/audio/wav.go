// Package audio holds the sample plumbing shared by the microphone sources,
// the detectors and the CLI: WAV files, sample formats, conversion of any
// input to the 16 kHz mono int16 stream everything downstream expects,
// levels in dBFS and deterministic noise for tests and simulation.
package audio

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// Rate is the sample rate of every stream after conversion. 16 kHz mono is
// what wake-word and speech-to-text engines (Wyoming servers included) want.
const Rate = 16000

// Encoding is a raw PCM sample encoding.
type Encoding uint8

const (
	S16LE Encoding = iota + 1
	U8
	S24LE
	S32LE
	F32LE
)

// Width is the size of one sample in bytes.
func (e Encoding) Width() int {
	switch e {
	case U8:
		return 1
	case S16LE:
		return 2
	case S24LE:
		return 3
	case S32LE, F32LE:
		return 4
	}
	return 0
}

func (e Encoding) String() string {
	switch e {
	case U8:
		return "u8"
	case S16LE:
		return "s16le"
	case S24LE:
		return "s24le"
	case S32LE:
		return "s32le"
	case F32LE:
		return "f32le"
	}
	return fmt.Sprintf("encoding(%d)", uint8(e))
}

// ParseEncoding is the inverse of Encoding.String.
func ParseEncoding(s string) (Encoding, error) {
	for _, e := range []Encoding{S16LE, U8, S24LE, S32LE, F32LE} {
		if e.String() == s {
			return e, nil
		}
	}
	return 0, errors.New("encoding: want s16le, u8, s24le, s32le or f32le")
}

// Format describes interleaved raw PCM.
type Format struct {
	Rate     int
	Channels int
	Encoding Encoding
}

// Mono16k is the format every Source delivers.
var Mono16k = Format{Rate: Rate, Channels: 1, Encoding: S16LE}

// Validate reports an unusable format.
func (f Format) Validate() error {
	if f.Rate < 4000 || f.Rate > 384000 {
		return errors.New("rate: out of range 4000..384000 Hz")
	}
	if f.Channels < 1 || f.Channels > 32 {
		return errors.New("channels: out of range 1..32")
	}
	if f.Encoding.Width() == 0 {
		return fmt.Errorf("unknown sample encoding %v", f.Encoding)
	}
	return nil
}

func (f Format) frameBytes() int { return f.Channels * f.Encoding.Width() }

// WAVReader streams the samples of a RIFF/WAVE file as 16 kHz mono.
type WAVReader struct {
	Format  Format // of the file, before conversion
	Frames  int64  // frames in the data chunk as declared; -1 when unknown
	rd      *Reader
	dataEnd int64
}

// NewWAVReader parses the header of a WAV file up to its data chunk.
// PCM 8/16/24/32-bit and 32-bit float are accepted, also in
// WAVE_FORMAT_EXTENSIBLE form; unknown chunks (LIST, fact …) are skipped.
func NewWAVReader(r io.Reader) (*WAVReader, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return nil, fmt.Errorf("wav: reading RIFF header: %w", err)
	}
	if string(hdr[0:4]) != "RIFF" || string(hdr[8:12]) != "WAVE" {
		return nil, errors.New("wav: not a RIFF/WAVE file")
	}
	var f Format
	haveFmt := false
	for {
		var ch [8]byte
		if _, err := io.ReadFull(br, ch[:]); err != nil {
			return nil, fmt.Errorf("wav: no data chunk: %w", err)
		}
		id := string(ch[0:4])
		size := int64(binary.LittleEndian.Uint32(ch[4:8]))
		switch id {
		case "fmt ":
			if size < 16 || size > 1<<10 {
				return nil, fmt.Errorf("wav: fmt chunk of %d bytes", size)
			}
			b := make([]byte, size+size&1)
			if _, err := io.ReadFull(br, b); err != nil {
				return nil, fmt.Errorf("wav: fmt chunk: %w", err)
			}
			tag := binary.LittleEndian.Uint16(b[0:2])
			f.Channels = int(binary.LittleEndian.Uint16(b[2:4]))
			f.Rate = int(binary.LittleEndian.Uint32(b[4:8]))
			bits := int(binary.LittleEndian.Uint16(b[14:16]))
			if tag == 0xFFFE && size >= 40 { // extensible: the real tag opens the sub-format GUID
				tag = binary.LittleEndian.Uint16(b[24:26])
			}
			switch {
			case tag == 1 && bits == 8:
				f.Encoding = U8
			case tag == 1 && bits == 16:
				f.Encoding = S16LE
			case tag == 1 && bits == 24:
				f.Encoding = S24LE
			case tag == 1 && bits == 32:
				f.Encoding = S32LE
			case tag == 3 && bits == 32:
				f.Encoding = F32LE
			default:
				return nil, fmt.Errorf("wav: unsupported format tag %#x with %d bits", tag, bits)
			}
			if err := f.Validate(); err != nil {
				return nil, fmt.Errorf("wav: %w", err)
			}
			haveFmt = true
		case "data":
			if !haveFmt {
				return nil, errors.New("wav: data chunk before fmt chunk")
			}
			w := &WAVReader{Format: f, Frames: size / int64(f.frameBytes())}
			// Streams written by a recorder that never finished (arecord to a
			// pipe) declare 0 or 0xFFFFFFFF bytes: read until EOF then.
			if size == 0 || size == 0xFFFFFFFF {
				w.Frames = -1
				w.rd = NewReader(br, f)
			} else {
				w.rd = NewReader(io.LimitReader(br, size), f)
			}
			return w, nil
		default:
			if _, err := br.Discard(int(size + size&1)); err != nil {
				return nil, fmt.Errorf("wav: skipping %q chunk: %w", id, err)
			}
		}
	}
}

// Read reads converted 16 kHz mono samples; io.EOF at the end of the data.
func (w *WAVReader) Read(p []int16) (int, error) { return w.rd.Read(p) }

// ReadWAVFile reads a whole WAV file as 16 kHz mono samples.
func ReadWAVFile(path string) ([]int16, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w, err := NewWAVReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out, err := ReadAll(w)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// SampleReader is anything that reads 16 kHz mono samples.
type SampleReader interface {
	Read(p []int16) (int, error)
}

// ReadAll reads r until io.EOF.
func ReadAll(r SampleReader) ([]int16, error) {
	out := make([]int16, 0, Rate)
	buf := make([]int16, 4096)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// WriteWAV writes 16-bit mono PCM at rate.
func WriteWAV(w io.Writer, rate int, samples []int16) error {
	var h [44]byte
	data := len(samples) * 2
	copy(h[0:4], "RIFF")
	binary.LittleEndian.PutUint32(h[4:8], uint32(36+data))
	copy(h[8:16], "WAVEfmt ")
	binary.LittleEndian.PutUint32(h[16:20], 16)
	binary.LittleEndian.PutUint16(h[20:22], 1) // PCM
	binary.LittleEndian.PutUint16(h[22:24], 1) // mono
	binary.LittleEndian.PutUint32(h[24:28], uint32(rate))
	binary.LittleEndian.PutUint32(h[28:32], uint32(rate*2))
	binary.LittleEndian.PutUint16(h[32:34], 2)
	binary.LittleEndian.PutUint16(h[34:36], 16)
	copy(h[36:40], "data")
	binary.LittleEndian.PutUint32(h[40:44], uint32(data))
	if _, err := w.Write(h[:]); err != nil {
		return err
	}
	b := make([]byte, data)
	for i, s := range samples {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(s))
	}
	_, err := w.Write(b)
	return err
}

// WriteWAVFile writes 16 kHz mono samples to path, atomically: a half
// written template must never be loaded as a real one.
func WriteWAVFile(path string, samples []int16) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := WriteWAV(bw, Rate, samples); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
