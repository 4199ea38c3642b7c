package audio

import (
	"encoding/binary"
	"io"
	"math"
)

// Converter turns interleaved raw PCM of any Format into 16 kHz mono int16.
// It keeps partial frames and filter history between calls, so callers may
// feed it byte slices of any length (pipes deliver what they like).
type Converter struct {
	in      Format
	partial []byte // bytes of an incomplete frame from the previous call
	mono    []float32
	res     *Resampler // nil when the input is already at 16 kHz
	out     []float32
}

// NewConverter builds a converter for input format in (validated by caller).
func NewConverter(in Format) *Converter {
	c := &Converter{in: in}
	if in.Rate != Rate {
		c.res = NewResampler(in.Rate, Rate)
	}
	return c
}

// Passthrough reports whether the input is already 16 kHz mono s16le, in
// which case conversion is an exact copy.
func (c *Converter) Passthrough() bool { return c.in == Mono16k }

// Convert appends the samples contained in src to dst and returns it.
func (c *Converter) Convert(dst []int16, src []byte) []int16 {
	fb := c.in.frameBytes()
	if len(c.partial) > 0 {
		need := fb - len(c.partial)
		if len(src) < need {
			c.partial = append(c.partial, src...)
			return dst
		}
		c.partial = append(c.partial, src[:need]...)
		src = src[need:]
		dst = c.convertFrames(dst, c.partial)
		c.partial = c.partial[:0]
	}
	whole := len(src) / fb * fb
	dst = c.convertFrames(dst, src[:whole])
	c.partial = append(c.partial, src[whole:]...)
	return dst
}

func (c *Converter) convertFrames(dst []int16, b []byte) []int16 {
	if len(b) == 0 {
		return dst
	}
	if c.Passthrough() {
		for i := 0; i+1 < len(b); i += 2 {
			dst = append(dst, int16(binary.LittleEndian.Uint16(b[i:])))
		}
		return dst
	}
	c.mono = Downmix(c.mono[:0], b, c.in)
	if c.res == nil {
		return AppendInt16(dst, c.mono)
	}
	c.out = c.res.Process(c.out[:0], c.mono)
	return AppendInt16(dst, c.out)
}

// Downmix decodes interleaved frames of format f and appends the average of
// their channels, in the int16 scale (full scale = 32768), to dst. Averaging
// rather than picking one channel keeps a stereo mic pair's gain and does not
// lose a talker who is nearer the other capsule.
func Downmix(dst []float32, b []byte, f Format) []float32 {
	w := f.Encoding.Width()
	ch := f.Channels
	fb := w * ch
	inv := 1 / float32(ch)
	for i := 0; i+fb <= len(b); i += fb {
		var sum float32
		for c := 0; c < ch; c++ {
			sum += decodeSample(b[i+c*w:], f.Encoding)
		}
		dst = append(dst, sum*inv)
	}
	return dst
}

func decodeSample(b []byte, e Encoding) float32 {
	switch e {
	case S16LE:
		return float32(int16(binary.LittleEndian.Uint16(b)))
	case U8:
		return float32(int(b[0])-128) * 256
	case S24LE:
		v := int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
		return float32(v) / 256
	case S32LE:
		return float32(int32(binary.LittleEndian.Uint32(b))) / 65536
	case F32LE:
		return math.Float32frombits(binary.LittleEndian.Uint32(b)) * 32768
	}
	return 0
}

// AppendInt16 rounds and clips float samples in the int16 scale.
func AppendInt16(dst []int16, src []float32) []int16 {
	for _, v := range src {
		dst = append(dst, clip16(v))
	}
	return dst
}

func clip16(v float32) int16 {
	if v >= 32767 {
		return 32767
	}
	if v <= -32768 {
		return -32768
	}
	if v < 0 {
		return int16(v - 0.5)
	}
	return int16(v + 0.5)
}

// Reader converts a raw PCM byte stream into 16 kHz mono samples.
type Reader struct {
	r    io.Reader
	c    *Converter
	raw  []byte
	pend []int16 // converted samples not yet handed out
	err  error
}

// NewReader reads raw PCM of format f from r.
func NewReader(r io.Reader, f Format) *Reader {
	return &Reader{r: r, c: NewConverter(f), raw: make([]byte, 8192)}
}

// Read fills p with up to len(p) samples. It returns what it has as soon as
// it has something, like io.Reader, so a live pipe is not delayed.
func (r *Reader) Read(p []int16) (int, error) {
	for len(r.pend) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		n, err := r.r.Read(r.raw)
		r.pend = r.c.Convert(r.pend[:0], r.raw[:n])
		if err != nil {
			r.err = err
		}
	}
	n := copy(p, r.pend)
	r.pend = r.pend[:copy(r.pend, r.pend[n:])]
	return n, nil
}
