//go:build gocv

package camera

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"gocv.io/x/gocv"

	"github.com/edgeagent/edgeagent/clock"
)

const gocvBuilt = true

// gocvSource reads through OpenCV's VideoCapture: a device, a video file,
// or a GStreamer pipeline (the Pi camera through libcamerasrc, a Jetson CSI
// camera through nvarguscamerasrc). Pipelines should end in
// "video/x-raw,format=GRAY8 ! appsink": OpenCV then hands over the luma
// plane as it is. Anything else arrives as BGR and is converted to I420 in
// OpenCV, which yields luma and chroma in one pass.
type gocvSource struct {
	vc   *gocv.VideoCapture
	mat  gocv.Mat
	yuv  gocv.Mat
	file bool
	loop bool
	seq  uint64
	what string
	// clock stamps frames: OpenCV's device keeps its own frame rate.
	clock clock.Clock
}

func openGoCV(ctx context.Context, o Opts, clk clock.Clock) (Source, error) {
	var (
		vc   *gocv.VideoCapture
		err  error
		what string
	)
	switch {
	case o.Pipeline != "":
		what = "pipeline"
		vc, err = gocv.OpenVideoCaptureWithAPI(o.Pipeline, gocv.VideoCaptureGstreamer)
	case o.Path != "":
		what = o.Path
		vc, err = gocv.VideoCaptureFile(o.Path)
	default:
		what = o.Device
		if n, aerr := strconv.Atoi(o.Device); aerr == nil {
			vc, err = gocv.VideoCaptureDevice(n)
		} else {
			vc, err = gocv.OpenVideoCaptureWithAPI(o.Device, gocv.VideoCaptureV4L2)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("gocv %s: %w", what, err)
	}
	if !vc.IsOpened() {
		vc.Close()
		return nil, fmt.Errorf("gocv %s: cannot open", what)
	}
	if o.Pipeline == "" && o.Path == "" {
		vc.Set(gocv.VideoCaptureFrameWidth, float64(o.Width))
		vc.Set(gocv.VideoCaptureFrameHeight, float64(o.Height))
		vc.Set(gocv.VideoCaptureFPS, o.FPS)
		vc.Set(gocv.VideoCaptureBufferSize, float64(o.Buffers))
	}
	return &gocvSource{vc: vc, mat: gocv.NewMat(), yuv: gocv.NewMat(), file: o.Path != "",
		loop: o.Loop, what: what, clock: clk}, nil
}

func (s *gocvSource) Next(ctx context.Context, f *Frame) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !s.vc.Read(&s.mat) || s.mat.Empty() {
		if s.file {
			if !s.loop {
				return io.EOF
			}
			s.vc.Set(gocv.VideoCapturePosFrames, 0)
			if !s.vc.Read(&s.mat) || s.mat.Empty() {
				return fmt.Errorf("gocv %s: no frames", s.what)
			}
		} else {
			return fmt.Errorf("gocv %s: read failed", s.what)
		}
	}
	w, h := s.mat.Cols(), s.mat.Rows()
	switch s.mat.Channels() {
	case 1:
		data, err := s.mat.DataPtrUint8()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadFrame, err)
		}
		buf := f.grow(w * h)
		copy(buf, data) // the Mat is reused by the next Read
		f.Width, f.Height = w, h
		f.Y, f.YStride = buf, w
		f.Cb, f.Cr, f.CStride = nil, nil, 0
	case 3:
		if w%2 != 0 || h%2 != 0 {
			return fmt.Errorf("%w: I420 needs even sizes, got %dx%d", ErrBadFrame, w, h)
		}
		gocv.CvtColor(s.mat, &s.yuv, gocv.ColorBGRToYUVI420)
		data, err := s.yuv.DataPtrUint8()
		if err != nil {
			return fmt.Errorf("%w: %v", ErrBadFrame, err)
		}
		copy(f.grow(i420Size(w, h)), data)
		f.setI420(w, h)
	default:
		return asConfigError(errors.New("gocv: frames with neither 1 nor 3 channels"))
	}
	f.stamp(&s.seq, s.clock.Now())
	return nil
}

func (s *gocvSource) Close() error {
	s.mat.Close()
	s.yuv.Close()
	return s.vc.Close()
}
