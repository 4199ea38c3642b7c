package camera

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
)

// execSource reads raw YUV420 (I420) frames from a command's stdout. On a
// Pi with a CSI camera, `rpicam-vid --codec yuv420 -o -` delivers frames
// through libcamera without cgo: the luma plane is the first width×height
// bytes of each frame, taken as it is.
type execSource struct {
	cmd    *exec.Cmd
	out    *bufio.Reader
	stderr *sensors.Tail
	w, h   int
	seq    uint64
	waited bool
	clock  clock.Clock // stamps frames: the command keeps its own frame rate
}

func openExec(ctx context.Context, o Opts, clk clock.Clock) (Source, error) {
	cmd := exec.CommandContext(ctx, o.Command[0], o.Command[1:]...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	tail := &sensors.Tail{}
	cmd.Stderr = tail
	// A child that keeps the pipes open must not hold up Close.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		// A missing program is retried with backoff too: it recovers
		// once the program is installed, without restarting the agent.
		return nil, fmt.Errorf("exec %s: %w", o.Command[0], err)
	}
	return &execSource{
		cmd: cmd, out: bufio.NewReaderSize(stdout, 1<<20), stderr: tail,
		w: o.Width, h: o.Height, clock: clk,
	}, nil
}

func (s *execSource) Next(ctx context.Context, f *Frame) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	buf := f.grow(i420Size(s.w, s.h))
	if _, err := io.ReadFull(s.out, buf); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		werr := s.cmd.Wait()
		s.waited = true
		msg := strings.TrimSpace(s.stderr.String())
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("stream ended mid-frame (is the output %dx%d I420?)", s.w, s.h)
		} else if errors.Is(err, io.EOF) {
			err = errors.New("stream ended")
		}
		if werr != nil {
			err = fmt.Errorf("%w; %s: %v", err, s.cmd.Path, werr)
		}
		if msg != "" {
			err = fmt.Errorf("%w; stderr: %s", err, msg)
		}
		return err
	}
	f.setI420(s.w, s.h)
	f.stamp(&s.seq, s.clock.Now())
	return nil
}

func (s *execSource) Close() error {
	if !s.waited {
		s.waited = true
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	}
	return nil
}
