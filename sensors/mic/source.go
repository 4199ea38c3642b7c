package mic

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
)

// Stream delivers 16 kHz mono int16 audio, whatever the device gives.
type Stream interface {
	// Read blocks until samples are available and fills p with up to
	// len(p) of them; io.EOF at the end of a finite source. at is when
	// the last of them was captured, on the source's clock (the speaker's
	// too, for half-duplex): a reader that runs late gets audio of the
	// past, and must judge it by its own time.
	Read(p []int16) (n int, at time.Time, err error)
	// Close releases the device; a blocked Read returns.
	Close() error
	// Dropped counts samples lost before they reached Read (a buffer
	// that was full because the pipeline fell behind).
	Dropped() uint64
}

// Source opens Streams. Opening is where devices and commands are touched,
// so that building a sensor (edgeagent check) needs no hardware.
type Source interface {
	Open(ctx context.Context) (Stream, error)
	String() string
}

// NewSource builds the source the options name; a file or the simulator
// delivers its samples on clk's time when paced.
func NewSource(o Opts, clk clock.Clock) (Source, error) {
	switch o.Source {
	case "exec":
		f, err := o.format()
		if err != nil {
			return nil, err
		}
		return &ExecSource{Command: o.Command, Format: f, Clock: clk}, nil
	case "wav":
		return &WAVSource{Path: o.File, Pace: o.Pace, Loop: o.Loop, Clock: clk}, nil
	case "sim":
		return &SimSource{Opts: o.Sim, Pace: o.Pace, Clock: clk}, nil
	case "malgo":
		return newMalgoSource(o, clk)
	}
	return nil, errors.New("options.source: unknown")
}

// ExecSource reads raw PCM from a command's stdout: arecord, parec,
// sox -d … — for cgo-free builds, or any device miniaudio does not reach.
type ExecSource struct {
	Command []string
	Format  audio.Format
	Clock   clock.Clock // stamps the audio as it arrives (nil: the wall clock)
}

func (s *ExecSource) String() string { return "exec " + strings.Join(s.Command, " ") }

// Open starts the command.
func (s *ExecSource) Open(ctx context.Context) (Stream, error) {
	if len(s.Command) == 0 {
		return nil, errors.New("exec: no command")
	}
	if err := s.Format.Validate(); err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	cmd := exec.Command(s.Command[0], s.Command[1:]...)
	// Our own pipe rather than StdoutPipe: Wait closes that one as soon as
	// the command exits, which can cut off output not yet read.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	var stderr sensors.Tail
	cmd.Stderr = &stderr
	// Wait also waits for the stderr copy, which a grandchild (sh -c
	// "arecord … | sox …") keeps open after the command itself is killed:
	// without a bound, Close would wait for it forever.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("exec %s: %w", s.Command[0], err)
	}
	pw.Close() // the child has its copy; EOF comes when it exits
	st := &execStream{cmd: cmd, pipe: pr, rd: audio.NewReader(pr, s.Format), stderr: &stderr, waited: make(chan struct{}),
		clock: clock.Or(s.Clock)}
	go func() {
		st.waitErr = cmd.Wait()
		close(st.waited)
	}()
	return st, nil
}

type execStream struct {
	cmd     *exec.Cmd
	pipe    *os.File
	rd      *audio.Reader
	stderr  *sensors.Tail
	waited  chan struct{}
	waitErr error
	once    sync.Once
	clock   clock.Clock
}

// Read stamps the audio when it arrives: the pipe says nothing of when it
// was captured, and a command's own buffer is short.
func (s *execStream) Read(p []int16) (int, time.Time, error) {
	n, err := s.read(p)
	return n, s.clock.Now(), err
}

func (s *execStream) read(p []int16) (int, error) {
	n, err := s.rd.Read(p)
	if err == io.EOF {
		// The command ended: say why, with its last words on stderr.
		<-s.waited
		msg := strings.TrimSpace(s.stderr.String())
		if msg != "" {
			msg = ": " + msg
		}
		if s.waitErr != nil {
			return n, fmt.Errorf("%s exited (%v)%s", s.cmd.Path, s.waitErr, msg)
		}
		return n, fmt.Errorf("%s ended its output%s", s.cmd.Path, msg)
	}
	return n, err
}

func (s *execStream) Close() error {
	s.once.Do(func() {
		if s.cmd.Process != nil {
			s.cmd.Process.Kill()
		}
		// Closing our end unblocks a Read still waiting on a grandchild
		// that holds the pipe open (sh -c "arecord …"), and ends that
		// grandchild at its next write (EPIPE).
		s.pipe.Close()
	})
	<-s.waited
	return nil
}

func (s *execStream) Dropped() uint64 { return 0 }

// WAVSource replays a WAV file, in real time or as fast as it is read.
type WAVSource struct {
	Path  string
	Pace  bool
	Loop  bool
	Clock clock.Clock // paces the samples (nil: the wall clock)
}

func (s *WAVSource) String() string { return "wav " + s.Path }

// Open opens the file and checks its header.
func (s *WAVSource) Open(ctx context.Context) (Stream, error) {
	st := &wavStream{src: s, pacer: pacer{clock: s.Clock}, closed: make(chan struct{})}
	if err := st.open(); err != nil {
		return nil, err
	}
	return st, nil
}

type wavStream struct {
	src    *WAVSource
	f      *os.File
	r      *audio.WAVReader
	pacer  pacer
	closed chan struct{}
	once   sync.Once
	mu     sync.Mutex // f and r, against Close
}

func (s *wavStream) open() error {
	f, err := os.Open(s.src.Path)
	if err != nil {
		return err
	}
	r, err := audio.NewWAVReader(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", s.src.Path, err)
	}
	s.mu.Lock()
	if s.f != nil {
		s.f.Close()
	}
	s.f, s.r = f, r
	s.mu.Unlock()
	return nil
}

// Read stamps paced audio with the time it is due, as a device would have
// captured it (a reader running late gets it at once, stamped in the
// past); unpaced audio has no time of its own and is stamped when read.
func (s *wavStream) Read(p []int16) (int, time.Time, error) {
	if !s.src.Pace {
		n, err := s.read(p)
		return n, clock.Or(s.src.Clock).Now(), err
	}
	// Hand out at most 20 ms at a time, when it is due: a live device
	// delivers in periods, and a large read must not run ahead.
	p = p[:min(len(p), audio.Rate/50)]
	due, err := s.pacer.wait(len(p), s.closed)
	if err != nil {
		return 0, time.Time{}, err
	}
	n, err := s.read(p)
	// A short read (the file's buffer, its end) hands out fewer samples
	// than were due: the rest come next, and are due after these.
	s.pacer.sent -= int64(len(p) - n)
	return n, due.Add(-samplesDur(len(p) - n)), err
}

func (s *wavStream) read(p []int16) (int, error) {
	for tries := 0; ; tries++ {
		select {
		case <-s.closed:
			return 0, errClosed
		default:
		}
		n, err := s.r.Read(p)
		if err == io.EOF && s.src.Loop && tries == 0 {
			if err := s.open(); err != nil {
				return 0, err
			}
			if n > 0 {
				return n, nil
			}
			continue
		}
		return n, err
	}
}

func (s *wavStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f != nil {
		return s.f.Close()
	}
	return nil
}

func (s *wavStream) Dropped() uint64 { return 0 }

var errClosed = errors.New("mic: stream closed")

// pacer releases samples at the 16 kHz rate of its clock (nil: the wall
// clock).
type pacer struct {
	clock clock.Clock
	start time.Time
	sent  int64
}

// wait returns when the next n samples are due, and when that is: the
// time their last sample sounds, on the pacer's clock.
func (p *pacer) wait(n int, closed <-chan struct{}) (time.Time, error) {
	if p.start.IsZero() {
		p.clock = clock.Or(p.clock)
		p.start = p.clock.Now()
	}
	p.sent += int64(n)
	due := p.start.Add(samplesDur(int(p.sent)))
	if d := due.Sub(p.clock.Now()); d > 0 {
		t := p.clock.NewTimer(d)
		defer t.Stop()
		select {
		case <-closed:
			return time.Time{}, errClosed
		case <-t.C():
		}
	}
	return due, nil
}

func samplesDur(n int) time.Duration { return time.Duration(n) * time.Second / audio.Rate }

// SimSource is a scripted soundscape: background noise with utterances
// from WAV files at given times, repeated every period. The sim board uses
// it so that the whole voice path (VAD, wake word, capture) runs on a
// laptop.
type SimSource struct {
	Opts  SimOpts
	Pace  bool
	Air   *duplex.Line // when set, what the sim speaker plays is heard too
	Clock clock.Clock  // paces the samples (nil: the wall clock)
}

func (s *SimSource) String() string { return "sim" }

// Open loads the utterances.
func (s *SimSource) Open(ctx context.Context) (Stream, error) {
	st := &simStream{src: s, pacer: pacer{clock: s.Clock}, closed: make(chan struct{})}
	if s.Opts.Noise != "none" {
		st.noise = audio.NewNoise(s.Opts.Noise, s.Opts.NoiseDBFS, s.Opts.Seed)
	}
	for _, u := range s.Opts.Utterances {
		samples, err := audio.ReadWAVFile(u.File)
		if err != nil {
			return nil, err
		}
		g := math.Pow(10, u.GainDB/20)
		clip := make([]float32, len(samples))
		for i, v := range samples {
			clip[i] = float32(float64(v) * g)
		}
		st.clips = append(st.clips, simClip{at: int64(u.At.Seconds() * audio.Rate), samples: clip})
	}
	if s.Opts.Period > 0 {
		st.period = int64(s.Opts.Period.Seconds() * audio.Rate)
	}
	return st, nil
}

type simClip struct {
	at      int64
	samples []float32
}

type simStream struct {
	src    *SimSource
	noise  *audio.Noise
	clips  []simClip
	period int64
	pos    int64 // samples produced
	pacer  pacer
	closed chan struct{}
	once   sync.Once
}

// Read stamps the samples as wavStream's Read does: paced, with the time
// they are due; unpaced, when they are read.
func (s *simStream) Read(p []int16) (int, time.Time, error) {
	p = p[:min(len(p), audio.Rate/50)]
	var due time.Time
	if s.src.Pace {
		var err error
		if due, err = s.pacer.wait(len(p), s.closed); err != nil {
			return 0, time.Time{}, err
		}
	} else {
		select {
		case <-s.closed:
			return 0, time.Time{}, errClosed
		default:
		}
		due = clock.Or(s.src.Clock).Now()
	}
	for i := range p {
		t := s.pos + int64(i)
		v := 0.0
		if s.noise != nil {
			v = s.noise.Next()
		}
		inPeriod := t
		if s.period > 0 {
			inPeriod = t % s.period
		}
		for _, c := range s.clips {
			if k := inPeriod - c.at; k >= 0 && k < int64(len(c.samples)) && (s.period > 0 || t == inPeriod) {
				v += float64(c.samples[k])
			}
		}
		p[i] = int16(max(-32768, min(32767, math.Round(v))))
	}
	if s.src.Air != nil {
		// Paced, the samples sound at the pacer's time: the speaker's sound
		// is heard where it plays, whole, however late this goroutine runs.
		var at time.Time
		if s.src.Pace {
			at = s.pacer.start.Add(time.Duration(s.pos) * time.Second / audio.Rate)
		}
		if err := s.src.Air.Hear(s.pacer.clock, at, p, s.closed); err != nil {
			return 0, time.Time{}, errClosed
		}
	}
	s.pos += int64(len(p))
	return len(p), due, nil
}

func (s *simStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return nil
}

func (s *simStream) Dropped() uint64 { return 0 }
