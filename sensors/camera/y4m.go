package camera

import (
	"bufio"
	"fmt"
	"image"
	"io"
	"strconv"
	"strings"
)

// y4mReader reads YUV4MPEG2 (ffmpeg -f yuv4mpegpipe, the usual way to
// keep uncompressed clips): a header line, then "FRAME" lines each
// followed by the planes of one frame.
type y4mReader struct {
	r          *bufio.Reader
	w, h       int
	fps        float64
	ratio      image.YCbCrSubsampleRatio
	grey       bool
	frameBytes int
}

func newY4MReader(r io.Reader) (*y4mReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("y4m: reading header: %w", err)
	}
	fields := strings.Fields(line)
	if len(fields) == 0 || fields[0] != "YUV4MPEG2" {
		return nil, fmt.Errorf("y4m: not a YUV4MPEG2 stream")
	}
	y := &y4mReader{r: br, ratio: image.YCbCrSubsampleRatio420}
	for _, f := range fields[1:] {
		v := f[1:]
		switch f[0] {
		case 'W':
			y.w, err = strconv.Atoi(v)
		case 'H':
			y.h, err = strconv.Atoi(v)
		case 'F':
			num, den, ok := strings.Cut(v, ":")
			n, err1 := strconv.ParseFloat(num, 64)
			d, err2 := strconv.ParseFloat(den, 64)
			if !ok || err1 != nil || err2 != nil || n <= 0 || d <= 0 {
				return nil, fmt.Errorf("y4m: bad frame rate %q", v)
			}
			y.fps = n / d
		case 'C':
			switch {
			case strings.HasPrefix(v, "420") && !strings.Contains(v, "p1"):
				y.ratio = image.YCbCrSubsampleRatio420
			case v == "422":
				y.ratio = image.YCbCrSubsampleRatio422
			case v == "444":
				y.ratio = image.YCbCrSubsampleRatio444
			case v == "mono":
				y.grey = true
			default:
				return nil, asConfigError(fmt.Errorf("y4m: colour space %q not supported (want 420*, 422, 444 or mono, 8 bits)", v))
			}
		}
		if err != nil {
			return nil, fmt.Errorf("y4m: bad header field %q", f)
		}
	}
	if y.w <= 0 || y.h <= 0 || y.w > 16384 || y.h > 16384 {
		return nil, fmt.Errorf("y4m: bad frame size %dx%d", y.w, y.h)
	}
	cw, ch := y.chromaSize()
	y.frameBytes = y.w*y.h + 2*cw*ch
	return y, nil
}

func (y *y4mReader) chromaSize() (int, int) {
	switch {
	case y.grey:
		return 0, 0
	case y.ratio == image.YCbCrSubsampleRatio422:
		return (y.w + 1) / 2, y.h
	case y.ratio == image.YCbCrSubsampleRatio444:
		return y.w, y.h
	}
	return (y.w + 1) / 2, (y.h + 1) / 2
}

// skip reads past one frame without keeping it.
func (y *y4mReader) skip() error {
	if err := y.frameHeader(); err != nil {
		return err
	}
	if _, err := y.r.Discard(y.frameBytes); err != nil {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func (y *y4mReader) frameHeader() error {
	line, err := y.r.ReadSlice('\n')
	if err == io.EOF && len(line) == 0 {
		return io.EOF
	}
	if err != nil {
		return io.ErrUnexpectedEOF
	}
	if len(line) < 5 || string(line[:5]) != "FRAME" {
		return fmt.Errorf("y4m: corrupt stream: %q where FRAME was expected", truncate(line, 16))
	}
	return nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}

// next reads one frame into f.
func (y *y4mReader) next(f *Frame) error {
	if err := y.frameHeader(); err != nil {
		return err
	}
	buf := f.grow(y.frameBytes)
	if _, err := io.ReadFull(y.r, buf); err != nil {
		return io.ErrUnexpectedEOF
	}
	f.JPEG = nil
	f.Width, f.Height = y.w, y.h
	f.Y, f.YStride = buf[:y.w*y.h], y.w
	if y.grey {
		f.Cb, f.Cr, f.CStride = nil, nil, 0
		return nil
	}
	cw, ch := y.chromaSize()
	n := y.w * y.h
	f.Cb, f.Cr = buf[n:n+cw*ch], buf[n+cw*ch:n+2*cw*ch]
	f.CStride, f.Ratio = cw, y.ratio
	return nil
}
