package camera

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/edgeagent/edgeagent/clock"
)

// FileOpts configures a clip source.
type FileOpts struct {
	// FPS is the clip's nominal frame rate: it sets frame times and, when
	// paced, the delivery rate. 0: the Y4M header's rate, else 10.
	FPS float64
	// Pace delivers frames in real time at FPS, as a camera would: when
	// the consumer falls more than a frame behind, the late frames are
	// skipped (a gap in Frame.Seq, i.e. drops). Unpaced, frames come as
	// fast as they can be read and decoded.
	Pace bool
	// Loop starts over at the end instead of returning io.EOF.
	Loop bool
	// Clock times the frames from the start and paces them (nil: the wall
	// clock).
	Clock clock.Clock
}

// OpenFile opens a recorded clip: raw MJPEG (JPEG images back to back) or
// YUV4MPEG2, told apart by their first bytes.
func OpenFile(path string, o FileOpts) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s := &fileSource{path: path, o: o, f: f}
	if err := s.rewind(); err != nil {
		f.Close()
		return nil, err
	}
	if s.o.FPS <= 0 {
		s.o.FPS = 10
		if s.y4 != nil && s.y4.fps > 0 {
			s.o.FPS = s.y4.fps
		}
	}
	s.interval = time.Duration(float64(time.Second) / s.o.FPS)
	s.o.Clock = clock.Or(s.o.Clock)
	s.start = s.o.Clock.Now()
	return s, nil
}

type fileSource struct {
	path     string
	o        FileOpts
	f        *os.File
	mj       *mjpegReader
	y4       *y4mReader
	seq      uint64
	start    time.Time
	interval time.Duration
	read     uint64 // frames read since the last rewind
}

func (s *fileSource) rewind() error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	s.read = 0
	head := make([]byte, 9)
	n, _ := io.ReadFull(s.f, head)
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	switch {
	case n == 9 && string(head) == "YUV4MPEG2":
		y, err := newY4MReader(s.f)
		if err != nil {
			return fmt.Errorf("%s: %w", s.path, err)
		}
		s.y4, s.mj = y, nil
	case n >= 2 && head[0] == 0xFF && head[1] == 0xD8:
		if s.mj == nil {
			s.mj = newMJPEGReader(s.f)
		} else {
			s.mj.r.Reset(s.f)
		}
		s.y4 = nil
	default:
		return asConfigError(fmt.Errorf("%s: neither raw MJPEG nor YUV4MPEG2", s.path))
	}
	return nil
}

// FPS returns the clip's nominal frame rate.
func (s *fileSource) FPS() float64 { return s.o.FPS }

func (s *fileSource) Next(ctx context.Context, f *Frame) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.o.Pace {
		due := s.start.Add(time.Duration(s.seq) * s.interval)
		if wait := due.Sub(s.o.Clock.Now()); wait > 0 {
			if err := clock.Sleep(ctx, s.o.Clock, wait); err != nil {
				return err
			}
		} else if late := uint64(-wait / s.interval); late > 0 {
			for range late {
				if err := s.advance(nil); err != nil {
					return err
				}
			}
		}
	}
	if err := s.advance(f); err != nil {
		return err
	}
	return nil
}

// advance reads the next frame into f, or skips it when f is nil.
func (s *fileSource) advance(f *Frame) error {
	err := s.readOne(f)
	if errors.Is(err, io.EOF) && s.o.Loop {
		if s.read == 0 {
			return fmt.Errorf("%s: no frames", s.path)
		}
		if err := s.rewind(); err != nil {
			return err
		}
		err = s.readOne(f)
	}
	if err != nil && !errors.Is(err, ErrBadFrame) {
		return err
	}
	// A bad frame still takes its place in the sequence: it is a drop.
	s.read++
	if f != nil {
		f.Seq = s.seq
		f.Time = s.start.Add(time.Duration(s.seq) * s.interval)
	}
	s.seq++
	return err
}

func (s *fileSource) readOne(f *Frame) error {
	var err error
	if s.y4 != nil {
		if f == nil {
			err = s.y4.skip()
		} else {
			err = s.y4.next(f)
		}
	} else {
		var data []byte
		if f == nil {
			_, err = s.mj.next(nil)
		} else if data, err = s.mj.next(&f.jbuf); err == nil {
			if derr := decodeJPEG(data, f); derr != nil {
				return fmt.Errorf("%w: %s frame %d: %v", ErrBadFrame, s.path, s.seq, derr)
			}
		}
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		// A recording cut off mid-frame (the recorder was killed) ends
		// where its last whole frame does.
		return io.EOF
	}
	return err
}

func (s *fileSource) Close() error { return s.f.Close() }
