package camera

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"sync"
)

// mjpegReader splits a raw MJPEG stream (JPEG images back to back, as UVC
// webcams send them and ../shared/data/video stores them) into images.
//
// It walks the JPEG segment structure instead of searching for FF D9: an
// EXIF thumbnail inside APP1 carries an FF D9 of its own, and a progressive
// JPEG has several scans. Only the entropy-coded data after SOS is scanned
// byte by byte, where FF is always followed by 00 (stuffing), a restart
// marker or the next marker.
type mjpegReader struct {
	r   *bufio.Reader
	buf []byte
}

func newMJPEGReader(r io.Reader) *mjpegReader {
	return &mjpegReader{r: bufio.NewReaderSize(r, 64<<10)}
}

var errNotJPEG = errors.New("not a JPEG stream (no FF D8 start of image)")

// next reads the next image into *dst, reusing its storage (dst nil: the
// reader's own scratch, valid until the following call). It returns io.EOF
// at a clean end of the stream.
func (m *mjpegReader) next(dst *[]byte) ([]byte, error) {
	if dst == nil {
		dst = &m.buf
	}
	if err := m.startOfImage(); err != nil {
		return nil, err
	}
	b := append((*dst)[:0], 0xFF, 0xD8)
	var mk byte
	scanned := false // mk ended entropy-coded data: the scan read its FF
	for {
		if !scanned {
			var err error
			if mk, err = m.marker(); err != nil {
				return nil, err
			}
		}
		scanned = false
		b = append(b, 0xFF, mk)
		switch {
		case mk == 0xD9: // EOI
			*dst = b
			return b, nil
		case mk == 0x01 || mk >= 0xD0 && mk <= 0xD7: // no length
			continue
		}
		var err error
		if b, err = m.segment(b); err != nil {
			return nil, err
		}
		if mk == 0xDA { // SOS: the entropy-coded data follows
			if b, mk, err = m.entropyData(b); err != nil {
				return nil, err
			}
			scanned = true
		}
	}
}

// startOfImage reads up to and including the next SOI, tolerating garbage
// between images (some cameras pad).
func (m *mjpegReader) startOfImage() error {
	skipped := 0
	for {
		c, err := m.r.ReadByte()
		if err != nil {
			if err == io.EOF && skipped > 0 {
				return io.ErrUnexpectedEOF
			}
			return err
		}
		if c != 0xFF {
			skipped++
			if skipped > 1<<20 {
				return errNotJPEG
			}
			continue
		}
		c2, err := m.r.ReadByte()
		if err != nil {
			return io.ErrUnexpectedEOF
		}
		if c2 == 0xD8 {
			return nil
		}
		skipped += 2
		if c2 == 0xFF {
			_ = m.r.UnreadByte()
			skipped--
		}
	}
}

// marker reads the marker that must come next between segments, past its
// fill bytes, and returns its code.
func (m *mjpegReader) marker() (byte, error) {
	c, err := m.r.ReadByte()
	if err != nil {
		return 0, io.ErrUnexpectedEOF
	}
	if c != 0xFF {
		return 0, fmt.Errorf("mjpeg: corrupt stream: byte %#02x where a marker was expected", c)
	}
	mk, err := m.r.ReadByte()
	for err == nil && mk == 0xFF { // fill bytes
		mk, err = m.r.ReadByte()
	}
	if err != nil {
		return 0, io.ErrUnexpectedEOF
	}
	return mk, nil
}

// segment appends a marker segment's length and payload to b.
func (m *mjpegReader) segment(b []byte) ([]byte, error) {
	var l [2]byte
	if _, err := io.ReadFull(m.r, l[:]); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	n := int(l[0])<<8 | int(l[1])
	if n < 2 {
		return nil, fmt.Errorf("mjpeg: corrupt segment length %d", n)
	}
	b = append(b, l[0], l[1])
	b, err := appendN(b, m.r, n-2)
	if err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return b, nil
}

// entropyData appends the entropy-coded data after SOS to b, a buffer at a
// time up to each FF, keeping stuffed zeros and restart markers, and
// returns the code of the real marker that ends it (its FF consumed).
func (m *mjpegReader) entropyData(b []byte) ([]byte, byte, error) {
	for {
		p, _ := m.r.Peek(max(1, m.r.Buffered()))
		if len(p) == 0 {
			return nil, 0, io.ErrUnexpectedEOF
		}
		i := bytes.IndexByte(p, 0xFF)
		if i < 0 {
			b = append(b, p...)
			m.r.Discard(len(p))
			continue
		}
		b = append(b, p[:i]...)
		m.r.Discard(i + 1)
		c2, err := m.r.ReadByte()
		for err == nil && c2 == 0xFF { // fill bytes before a marker
			c2, err = m.r.ReadByte()
		}
		if err != nil {
			return nil, 0, io.ErrUnexpectedEOF
		}
		if c2 == 0x00 || c2 >= 0xD0 && c2 <= 0xD7 {
			b = append(b, 0xFF, c2)
			continue
		}
		return b, c2, nil
	}
}

func appendN(b []byte, r *bufio.Reader, n int) ([]byte, error) {
	for n > 0 {
		p, err := r.Peek(min(n, r.Size()))
		if len(p) == 0 {
			return b, err
		}
		b = append(b, p...)
		r.Discard(len(p))
		n -= len(p)
	}
	return b, nil
}

// decodeJPEG decodes one frame into f, which keeps data as its JPEG.
// Many UVC webcams leave the Huffman tables out of their MJPEG frames
// (the standard tables are implied); image/jpeg needs them, so they are
// put back first.
func decodeJPEG(data []byte, f *Frame) error {
	data = withHuffman(data, &f.buf)
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("decode jpeg: %w", err)
	}
	f.setImage(img)
	f.JPEG = data
	return nil
}

var (
	dhtOnce sync.Once
	dht     []byte // the standard tables of ITU T.81 Annex K.3, as one DHT segment
)

// standardDHT returns the DHT segment Go's encoder writes, which holds the
// Annex K tables that MJPEG implies.
func standardDHT() []byte {
	dhtOnce.Do(func() {
		// A colour image, so that all four tables are written.
		var buf bytes.Buffer
		_ = jpeg.Encode(&buf, image.NewYCbCr(image.Rect(0, 0, 16, 16), image.YCbCrSubsampleRatio420), nil)
		b := buf.Bytes()
		for i := 2; i+4 <= len(b); {
			if b[i] != 0xFF {
				break
			}
			n := int(b[i+2])<<8 | int(b[i+3])
			if b[i+1] == 0xC4 {
				dht = append(dht, b[i:i+2+n]...)
			}
			if b[i+1] == 0xDA {
				break
			}
			i += 2 + n
		}
	})
	return dht
}

// withHuffman returns data itself when it has a DHT segment before its
// first SOS, or a copy (in *scratch) with the standard tables inserted.
func withHuffman(data []byte, scratch *[]byte) []byte {
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			return data // not something to fix; let the decoder complain
		}
		mk := data[i+1]
		if mk == 0xC4 {
			return data
		}
		if mk == 0xDA {
			t := standardDHT()
			out := append((*scratch)[:0], data[:i]...)
			out = append(out, t...)
			out = append(out, data[i:]...)
			*scratch = out
			return out
		}
		if mk == 0xD8 || mk == 0x01 || mk >= 0xD0 && mk <= 0xD7 {
			i += 2
			continue
		}
		i += 2 + (int(data[i+2])<<8 | int(data[i+3]))
	}
	return data
}
