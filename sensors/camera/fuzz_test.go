package camera

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzMJPEGReader: whatever a camera or a clip file sends, the splitter
// never panics or loops, and every image it returns is a SOI … EOI span no
// longer than the input.
func FuzzMJPEGReader(f *testing.F) {
	img := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 'J', 'F', 0xFF, 0xDA, 0x00, 0x02, 0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD0, 0x56, 0xFF, 0xD9}
	f.Add(img)
	f.Add(append(append([]byte("garbage"), img...), img...))
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xE1, 0x00, 0x06, 0xFF, 0xD8, 0xFF, 0xD9, 0xFF, 0xD9}) // EXIF thumbnail EOI inside APP1
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xC0, 0x00, 0x01})                                     // bad segment length
	f.Fuzz(func(t *testing.T, data []byte) {
		m := newMJPEGReader(bytes.NewReader(data))
		total := 0
		for range 64 {
			b, err := m.next(nil)
			if err != nil {
				return
			}
			total += len(b)
			if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 || b[len(b)-2] != 0xFF || b[len(b)-1] != 0xD9 {
				t.Fatalf("image % x is not SOI … EOI", b[:min(len(b), 16)])
			}
			if total > len(data) {
				t.Fatalf("%d image bytes out of %d input bytes", total, len(data))
			}
		}
	})
}

// maxFuzzFrame keeps the Y4M target's frames small. The reader accepts
// headers up to 16384×16384 (400 MB a frame) and allocates the frame
// before reading it: fine for a clip the owner chose, and left as found.
const maxFuzzFrame = 1 << 22

// FuzzY4MReader: a Y4M header and frames, whatever their bytes: no panic,
// and every frame read has planes of the declared size.
func FuzzY4MReader(f *testing.F) {
	f.Add([]byte("YUV4MPEG2 W4 H2 F25:1 C420jpeg\nFRAME\n" + string(make([]byte, 12))))
	f.Add([]byte("YUV4MPEG2 W2 H2 Cmono\nFRAME\n\x01\x02\x03\x04FRAME\n\x05"))
	f.Add([]byte("YUV4MPEG2 W3 H3 C444\nFRAME Ixyz\n" + string(make([]byte, 27))))
	f.Add([]byte("YUV4MPEG2 W0 H-1 F0:0\n"))
	f.Add([]byte("YUV4MPEG2 W4 H2 C422\nFRAMX\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		y, err := newY4MReader(bytes.NewReader(data))
		if err != nil || y.frameBytes > maxFuzzFrame {
			return
		}
		var fr Frame
		for range 16 {
			err := y.next(&fr)
			if errors.Is(err, io.EOF) || err != nil {
				return
			}
			cw, ch := y.chromaSize()
			if len(fr.Y) != y.w*y.h || fr.YStride != y.w || len(fr.Cb) != cw*ch || len(fr.Cr) != cw*ch {
				t.Fatalf("%dx%d frame: Y %d, Cb %d, Cr %d", y.w, y.h, len(fr.Y), len(fr.Cb), len(fr.Cr))
			}
		}
	})
}
