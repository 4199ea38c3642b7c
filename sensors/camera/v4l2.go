//go:build linux

package camera

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"sort"
	"time"

	"github.com/blackjack/webcam"

	"github.com/edgeagent/edgeagent/clock"
)

func fourcc(s string) webcam.PixelFormat {
	return webcam.PixelFormat(uint32(s[0]) | uint32(s[1])<<8 | uint32(s[2])<<16 | uint32(s[3])<<24)
}

var (
	fmtMJPEG = fourcc("MJPG")
	fmtYUYV  = fourcc("YUYV")
	fmtGrey  = fourcc("GREY")
)

// v4l2Caps is what format negotiation asks of a device.
type v4l2Caps interface {
	GetSupportedFormats() map[webcam.PixelFormat]string
	GetSupportedFrameSizes(webcam.PixelFormat) []webcam.FrameSize
	GetSupportedFramerates(webcam.PixelFormat, uint32, uint32) []webcam.FrameRate
}

// v4l2Device is the part of *webcam.Webcam the source uses; tests put a
// fake behind it.
type v4l2Device interface {
	v4l2Caps
	SetImageFormat(webcam.PixelFormat, uint32, uint32) (webcam.PixelFormat, uint32, uint32, error)
	SetFramerate(float32) error
	SetBufferCount(uint32) error
	StartStreaming() error
	WaitForFrame(timeout uint32) error
	GetFrame() ([]byte, uint32, error)
	ReleaseFrame(uint32) error
	Close() error
}

// v4l2Opener opens a device by path.
type v4l2Opener func(path string) (v4l2Device, error)

func openWebcam(path string) (v4l2Device, error) {
	cam, err := webcam.Open(path)
	if err != nil {
		return nil, err // ENOENT while unplugged: retried with backoff
	}
	return cam, nil
}

// v4l2Mode is a negotiated capture mode.
type v4l2Mode struct {
	Format        webcam.PixelFormat
	Width, Height int
	FPS           float64 // 0: the device lists no rates; keep its default
}

func formatName(f webcam.PixelFormat) string {
	switch f {
	case fmtMJPEG:
		return "mjpeg"
	case fmtYUYV:
		return "yuyv"
	case fmtGrey:
		return "grey"
	}
	b := []byte{byte(f), byte(f >> 8), byte(f >> 16), byte(f >> 24)}
	return string(b)
}

// negotiate picks the format, size and rate to ask the device for.
//
// Size: the requested one when offered, else the smallest offered size
// that covers it, else the largest offered. Rate: the lowest offered rate
// at or above the requested one, else the highest. With format auto, raw
// formats come first, because their luma needs no decoding, but only
// when they reach the requested rate at that size: over USB 2 a webcam
// sends 640×480 YUYV at 30 fps but 1280×720 only at 10, where MJPEG still
// does 30.
func negotiate(dev v4l2Caps, format string, w, h int, fps float64) (v4l2Mode, error) {
	offered := dev.GetSupportedFormats()
	var candidates []webcam.PixelFormat
	switch format {
	case "mjpeg":
		candidates = []webcam.PixelFormat{fmtMJPEG}
	case "yuyv":
		candidates = []webcam.PixelFormat{fmtYUYV}
	case "grey":
		candidates = []webcam.PixelFormat{fmtGrey}
	default:
		candidates = []webcam.PixelFormat{fmtYUYV, fmtGrey, fmtMJPEG}
	}
	var modes []v4l2Mode
	for _, f := range candidates {
		if _, ok := offered[f]; !ok {
			continue
		}
		sw, sh, ok := pickSize(dev.GetSupportedFrameSizes(f), w, h)
		if !ok {
			continue
		}
		modes = append(modes, v4l2Mode{Format: f, Width: sw, Height: sh,
			FPS: pickRate(dev.GetSupportedFramerates(f, uint32(sw), uint32(sh)), fps)})
	}
	if len(modes) == 0 {
		var names []string
		for f := range offered {
			names = append(names, formatName(f))
		}
		sort.Strings(names)
		return v4l2Mode{}, asConfigError(fmt.Errorf("v4l2: no usable format (format %s; the device offers %v)", format, names))
	}
	for _, m := range modes {
		if m.FPS == 0 || m.FPS >= fps*0.99 {
			return m, nil
		}
	}
	// None reaches the rate: the fastest one.
	best := modes[0]
	for _, m := range modes[1:] {
		if m.FPS > best.FPS {
			best = m
		}
	}
	return best, nil
}

func pickSize(sizes []webcam.FrameSize, w, h int) (int, int, bool) {
	type wh struct{ w, h int }
	var opts []wh
	for _, s := range sizes {
		if s.StepWidth == 0 && s.StepHeight == 0 {
			opts = append(opts, wh{int(s.MaxWidth), int(s.MaxHeight)})
			continue
		}
		// stepwise or continuous: the requested size, clamped and on a step
		cw := clampStep(w, s.MinWidth, s.MaxWidth, s.StepWidth)
		ch := clampStep(h, s.MinHeight, s.MaxHeight, s.StepHeight)
		opts = append(opts, wh{cw, ch})
	}
	if len(opts) == 0 {
		return 0, 0, false
	}
	var best *wh
	for i := range opts {
		o := &opts[i]
		if o.w == w && o.h == h {
			return w, h, true
		}
		if o.w >= w && o.h >= h && (best == nil || o.w*o.h < best.w*best.h) {
			best = o
		}
	}
	if best == nil {
		best = &opts[0]
		for i := range opts {
			if opts[i].w*opts[i].h > best.w*best.h {
				best = &opts[i]
			}
		}
	}
	return best.w, best.h, true
}

func clampStep(v int, lo, hi, step uint32) int {
	x := min(max(v, int(lo)), int(hi))
	if step > 1 {
		x = int(lo) + (x-int(lo))/int(step)*int(step)
	}
	return x
}

// pickRate chooses among frame intervals (num/den seconds per frame).
func pickRate(rates []webcam.FrameRate, want float64) float64 {
	var offered []float64
	for _, r := range rates {
		if r.StepNumerator == 0 && r.StepDenominator == 0 {
			if r.MinNumerator > 0 {
				offered = append(offered, float64(r.MinDenominator)/float64(r.MinNumerator))
			}
			continue
		}
		// a range of intervals: the rates at both ends bound what is possible
		if r.MaxNumerator > 0 && r.MinNumerator > 0 {
			lo := float64(r.MinDenominator) / float64(r.MaxNumerator)
			hi := float64(r.MaxDenominator) / float64(r.MinNumerator)
			offered = append(offered, math.Min(math.Max(want, lo), hi))
		}
	}
	if len(offered) == 0 {
		return 0
	}
	sort.Float64s(offered)
	for _, f := range offered {
		if f >= want*0.99 {
			return f
		}
	}
	return offered[len(offered)-1]
}

// v4l2Source captures from a V4L2 device through blackjack/webcam
// (pure Go: ioctls and mmap, no cgo).
type v4l2Source struct {
	dev      v4l2Device
	mode     v4l2Mode
	path     string
	interval time.Duration
	seq      uint64
	last     time.Time
	stall    time.Duration // no frame for this long: the device is wedged
	// clock stamps frames and times a stall; the device keeps its own
	// frame rate (WaitForFrame blocks on it).
	clock clock.Clock
}

func openV4L2(o Opts, clk clock.Clock, open v4l2Opener) (Source, error) {
	dev, err := open(o.Device)
	if err != nil {
		return nil, fmt.Errorf("v4l2 %s: %w", o.Device, err)
	}
	mode, err := negotiate(dev, o.Format, o.Width, o.Height, o.FPS)
	if err != nil {
		dev.Close()
		return nil, fmt.Errorf("v4l2 %s: %w", o.Device, err)
	}
	if _, _, _, err := dev.SetImageFormat(mode.Format, uint32(mode.Width), uint32(mode.Height)); err != nil {
		dev.Close()
		return nil, fmt.Errorf("v4l2 %s: set format %s %dx%d: %w", o.Device, formatName(mode.Format), mode.Width, mode.Height, err)
	}
	if mode.FPS > 0 {
		// Not every driver takes a rate; the one it keeps is fine too.
		_ = dev.SetFramerate(float32(mode.FPS))
	}
	if err := dev.SetBufferCount(uint32(o.Buffers)); err != nil {
		dev.Close()
		return nil, err
	}
	if err := dev.StartStreaming(); err != nil {
		dev.Close()
		return nil, fmt.Errorf("v4l2 %s: %w", o.Device, err)
	}
	fps := mode.FPS
	if fps == 0 {
		fps = o.FPS
	}
	return &v4l2Source{
		dev: dev, mode: mode, path: o.Device,
		interval: time.Duration(float64(time.Second) / fps),
		stall:    max(5*time.Second, time.Duration(float64(5*time.Second)/fps)),
		clock:    clk,
	}, nil
}

var errStalled = errors.New("no frames")

func (s *v4l2Source) Next(ctx context.Context, f *Frame) error {
	start := s.clock.Now()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Wait in short slices so that ctx is honoured.
		err := s.dev.WaitForFrame(200)
		var timeout *webcam.Timeout
		if errors.As(err, &timeout) {
			if waited := s.clock.Since(start); waited >= s.stall {
				return fmt.Errorf("v4l2 %s: %w for %v", s.path, errStalled, waited.Round(time.Millisecond))
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("v4l2 %s: %w", s.path, err)
		}
		data, idx, err := s.dev.GetFrame()
		if err != nil {
			return fmt.Errorf("v4l2 %s: %w", s.path, err) // ENODEV: unplugged
		}
		if len(data) == 0 {
			_ = s.dev.ReleaseFrame(idx)
			continue
		}
		err = s.convert(data, f)
		// The buffer goes back to the driver at once: it may be reused.
		if rerr := s.dev.ReleaseFrame(idx); rerr != nil && err == nil {
			err = fmt.Errorf("v4l2 %s: %w", s.path, rerr)
		}
		s.stamp(f)
		return err
	}
}

// stamp numbers the frame. The driver's sequence numbers are not exposed
// by webcam v0.6.1, so a gap is inferred from the time since the last
// frame: 2.4 intervals is one dropped frame (and jitter).
func (s *v4l2Source) stamp(f *Frame) {
	now := s.clock.Now()
	if !s.last.IsZero() && s.interval > 0 {
		if gap := int64(math.Round(float64(now.Sub(s.last)) / float64(s.interval))); gap > 1 {
			s.seq += uint64(gap - 1)
		}
	}
	s.last = now
	f.Seq, f.Time = s.seq, now
	s.seq++
}

// convert takes the device buffer into f; the buffer must not be kept.
func (s *v4l2Source) convert(data []byte, f *Frame) error {
	w, h := s.mode.Width, s.mode.Height
	switch s.mode.Format {
	case fmtMJPEG:
		f.jbuf = append(f.jbuf[:0], data...)
		if err := decodeJPEG(f.jbuf, f); err != nil {
			return fmt.Errorf("%w: %v", ErrBadFrame, err)
		}
		return nil
	case fmtYUYV:
		// Y0 U0 Y1 V0: luma is every other byte; taking it, and the
		// 4:2:2 chroma for snapshots, is a copy, not a conversion.
		if len(data) < w*h*2 {
			return fmt.Errorf("%w: %d bytes for a %dx%d YUYV frame", ErrBadFrame, len(data), w, h)
		}
		cw := w / 2
		buf := f.grow(w*h + 2*cw*h)
		y, cb, cr := buf[:w*h], buf[w*h:w*h+cw*h], buf[w*h+cw*h:]
		for i := 0; i < cw*h; i++ {
			p := data[4*i : 4*i+4 : 4*i+4]
			y[2*i], cb[i], y[2*i+1], cr[i] = p[0], p[1], p[2], p[3]
		}
		f.Width, f.Height = w, h
		f.Y, f.YStride = y, w
		f.Cb, f.Cr, f.CStride, f.Ratio = cb, cr, cw, image.YCbCrSubsampleRatio422
		f.JPEG = nil
		return nil
	case fmtGrey:
		if len(data) < w*h {
			return fmt.Errorf("%w: %d bytes for a %dx%d GREY frame", ErrBadFrame, len(data), w, h)
		}
		buf := f.grow(w * h)
		copy(buf, data)
		f.Width, f.Height = w, h
		f.Y, f.YStride = buf, w
		f.Cb, f.Cr, f.CStride = nil, nil, 0
		f.JPEG = nil
		return nil
	}
	return asConfigError(fmt.Errorf("v4l2: format %s not supported", formatName(s.mode.Format)))
}

func (s *v4l2Source) Close() error { return s.dev.Close() }

func defaultV4L2(o Opts, clk clock.Clock) (Source, error) { return openV4L2(o, clk, openWebcam) }
