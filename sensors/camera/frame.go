package camera

import (
	"context"
	"errors"
	"image"
	"time"
)

// Frame is one picture from a Source. The luma plane is always there, as
// the device (or decoder) produced it: the motion detector needs nothing
// else, and taking it without a colour conversion is what keeps a camera
// cheap on a Pi. Chroma planes come along when the source has them for
// free, and JPEG when the device compressed the frame itself.
//
// A Frame's slices belong to its Source and are valid until the next call
// to Next with the same Frame: sources reuse their buffers so that a
// camera running for months does not churn the heap.
type Frame struct {
	Seq           uint64    // frame number at the source; a gap means the source dropped frames
	Time          time.Time // capture time (clips and the simulator: nominal time)
	Width, Height int

	Y       []byte // luma, Height rows of YStride bytes
	YStride int

	Cb, Cr  []byte // nil when the source has no chroma for free
	CStride int
	Ratio   image.YCbCrSubsampleRatio

	JPEG []byte // the frame as the device compressed it, or nil

	buf  []byte // the source's reusable storage behind the planes
	jbuf []byte // and behind JPEG: each frame owns its bytes, as frames are handed between goroutines
}

// Image returns the frame as an image sharing its planes: *image.YCbCr
// when there is chroma, *image.Gray otherwise.
func (f *Frame) Image() image.Image {
	r := image.Rect(0, 0, f.Width, f.Height)
	if f.Cb != nil {
		return &image.YCbCr{Y: f.Y, Cb: f.Cb, Cr: f.Cr, YStride: f.YStride, CStride: f.CStride,
			SubsampleRatio: f.Ratio, Rect: r}
	}
	return &image.Gray{Pix: f.Y, Stride: f.YStride, Rect: r}
}

// grow returns f.buf resized to n bytes, reusing its storage.
func (f *Frame) grow(n int) []byte {
	if cap(f.buf) < n {
		f.buf = make([]byte, n)
	}
	f.buf = f.buf[:n]
	return f.buf
}

// setImage points the frame's planes at a decoded image. Decoders give
// YCbCr (colour JPEG) or Gray (greyscale JPEG); anything else is reduced to
// luma through the colour model, which only exotic files need.
func (f *Frame) setImage(img image.Image) {
	b := img.Bounds()
	f.Width, f.Height = b.Dx(), b.Dy()
	f.Cb, f.Cr, f.CStride = nil, nil, 0
	switch m := img.(type) {
	case *image.YCbCr:
		f.Y, f.YStride = m.Y[m.YOffset(b.Min.X, b.Min.Y):], m.YStride
		f.Cb, f.Cr = m.Cb[m.COffset(b.Min.X, b.Min.Y):], m.Cr[m.COffset(b.Min.X, b.Min.Y):]
		f.CStride, f.Ratio = m.CStride, m.SubsampleRatio
	case *image.Gray:
		f.Y, f.YStride = m.Pix[m.PixOffset(b.Min.X, b.Min.Y):], m.Stride
	default:
		g := image.NewGray(image.Rect(0, 0, f.Width, f.Height))
		for y := 0; y < f.Height; y++ {
			for x := 0; x < f.Width; x++ {
				g.Set(x, y, img.At(b.Min.X+x, b.Min.Y+y))
			}
		}
		f.Y, f.YStride = g.Pix, g.Stride
	}
}

// setI420 points the frame at planar 4:2:0 data in f.buf (as rpicam-vid
// --codec yuv420 and Y4M C420 write it).
func (f *Frame) setI420(w, h int) {
	cw, ch := (w+1)/2, (h+1)/2
	f.Width, f.Height = w, h
	f.Y, f.YStride = f.buf[:w*h], w
	f.Cb = f.buf[w*h : w*h+cw*ch]
	f.Cr = f.buf[w*h+cw*ch : w*h+2*cw*ch]
	f.CStride, f.Ratio = cw, image.YCbCrSubsampleRatio420
}

// stamp finishes a frame that a source without a JPEG of its own (a
// command's raw output, OpenCV) has just read: timed now (the run's clock)
// and numbered with *seq, which counts on.
func (f *Frame) stamp(seq *uint64, now time.Time) {
	f.JPEG = nil
	f.Seq = *seq
	f.Time = now
	*seq++
}

func i420Size(w, h int) int { return w*h + 2*((w+1)/2)*((h+1)/2) }

// Source delivers the frames of one camera.
type Source interface {
	// Next blocks until the next frame is available and fills f, reusing
	// its buffers. It returns io.EOF at the end of a clip that does not
	// loop, ctx.Err() when ctx ends, an error wrapping ErrBadFrame when
	// one frame was lost, and any other error when the device failed: the
	// caller may then Close the source and open it again.
	Next(ctx context.Context, f *Frame) error
	Close() error
}

// ErrBadFrame marks a frame that was lost (corrupt data from the device or
// the clip) while the source itself is fine: the caller counts a drop and
// calls Next again. The Frame's Seq and Time are set; its planes are not.
var ErrBadFrame = errors.New("bad frame")

// ErrConfig marks errors that reopening the source cannot fix (a bad path
// pattern, a format the device does not offer); the sensor stops on them
// instead of retrying forever.
var ErrConfig = errors.New("camera configuration")

type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() []error {
	return []error{ErrConfig, e.err}
}

func asConfigError(err error) error {
	if err == nil {
		return nil
	}
	return configError{err}
}
