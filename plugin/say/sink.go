package say

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
)

// Sink is where speech is played: a sound card through a command, or the
// simulator.
type Sink interface {
	// Start opens the output for one utterance.
	Start(ctx context.Context, text string) (Player, error)
	String() string
}

// Player plays one utterance: 16 kHz mono samples.
type Player interface {
	// Write plays samples; it may block as long as the device is behind.
	Write(p []int16) error
	// Finish waits until everything written has been heard.
	Finish() error
	// Close stops at once (barge-in) and releases the device; after
	// Finish it only releases.
	Close() error
}

// ExecSink pipes raw s16le 16 kHz mono into a player command (aplay).
type ExecSink struct{ Command []string }

// DefaultPlayer is ALSA's player on the default device.
var DefaultPlayer = []string{"aplay", "-q", "-t", "raw", "-f", "S16_LE", "-r", "16000", "-c", "1"}

func (s *ExecSink) String() string { return "exec " + strings.Join(s.Command, " ") }

// Start runs the player command.
func (s *ExecSink) Start(ctx context.Context, _ string) (Player, error) {
	cmd := exec.CommandContext(ctx, s.Command[0], s.Command[1:]...)
	p := &execPlayer{cmd: cmd}
	cmd.Stderr = &p.stderr
	cmd.WaitDelay = time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", s.Command[0], err)
	}
	p.in = in
	return p, nil
}

type execPlayer struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr sensors.Tail
	buf    []byte
	once   sync.Once
	err    error
}

func (p *execPlayer) Write(s []int16) error {
	p.buf = p.buf[:0]
	for _, v := range s {
		p.buf = binary.LittleEndian.AppendUint16(p.buf, uint16(v))
	}
	if _, err := p.in.Write(p.buf); err != nil {
		return p.fail(err)
	}
	return nil
}

func (p *execPlayer) fail(err error) error {
	msg := strings.TrimSpace(p.stderr.String())
	if msg != "" {
		return fmt.Errorf("%s: %w: %s", p.cmd.Path, err, msg)
	}
	return fmt.Errorf("%s: %w", p.cmd.Path, err)
}

// Finish closes the player's stdin: it exits once it has played the rest.
func (p *execPlayer) Finish() error {
	p.once.Do(func() {
		p.in.Close()
		if err := p.cmd.Wait(); err != nil {
			p.err = p.fail(err)
		}
	})
	return p.err
}

func (p *execPlayer) Close() error {
	p.once.Do(func() {
		p.in.Close()
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
	return nil
}

// SimSink is the simulated speaker: it plays in real time on the clock,
// puts the sound on the air of a duplex line (where the sim microphone
// hears it), and records what was said (the last maxSaid utterances, so a
// long sim run stays flat in memory).
type SimSink struct {
	Clock clock.Clock
	Air   *duplex.Line // nil: nobody listens

	mu   sync.Mutex
	said []Spoken
	base int // number of the first utterance in said
}

// Spoken is one utterance the sim speaker played.
type Spoken struct {
	Text       string
	Start      time.Time // when the utterance was opened
	FirstAudio time.Time // when its first sample played (zero: none)
	Samples    int       // played before it ended or was stopped
	Stopped    bool      // cut off (barge-in, e-stop, a newer utterance)
}

func (s *SimSink) String() string { return "sim" }

// Said returns the utterances played so far.
func (s *SimSink) Said() []Spoken {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Spoken(nil), s.said...)
}

// Start opens an utterance.
func (s *SimSink) Start(ctx context.Context, text string) (Player, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.said) == maxSaid {
		s.said = append(s.said[:0], s.said[1:]...)
		s.base++
	}
	s.said = append(s.said, Spoken{Text: text, Start: s.Clock.Now()})
	return &simPlayer{s: s, n: s.base + len(s.said) - 1, ctx: ctx}, nil
}

// maxSaid bounds the utterances a SimSink remembers.
const maxSaid = 64

// spoken is utterance number n, or nil once it has been forgotten.
func (s *SimSink) spoken(n int) *Spoken {
	if i := n - s.base; i >= 0 && i < len(s.said) {
		return &s.said[i]
	}
	return nil
}

type simPlayer struct {
	s   *SimSink
	n   int // utterance number
	ctx context.Context
	due time.Time // when what was written so far has played
	air *duplex.Playback
}

// Write plays p in real time: it returns when p has been heard, as a
// sound card with a short buffer does.
func (p *simPlayer) Write(samples []int16) error {
	now := p.s.Clock.Now()
	p.s.mu.Lock()
	if sp := p.s.spoken(p.n); sp != nil {
		if sp.FirstAudio.IsZero() {
			sp.FirstAudio = now
		}
		sp.Samples += len(samples)
	}
	p.s.mu.Unlock()
	if p.due.Before(now) {
		p.due = now
	}
	if p.s.Air != nil {
		if p.air == nil {
			p.air = p.s.Air.Play(p.due)
		}
		p.air.Emit(samples)
	}
	p.due = p.due.Add(time.Duration(len(samples)) * time.Second / audio.Rate)
	return p.wait()
}

func (p *simPlayer) wait() error {
	d := p.due.Sub(p.s.Clock.Now())
	if d <= 0 {
		return nil
	}
	t := p.s.Clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-p.ctx.Done():
		return p.ctx.Err()
	}
}

func (p *simPlayer) Finish() error { return nil }

func (p *simPlayer) Close() error {
	if p.air != nil {
		p.air.End()
	}
	if p.ctx.Err() != nil {
		p.s.mu.Lock()
		if sp := p.s.spoken(p.n); sp != nil {
			sp.Stopped = true
		}
		p.s.mu.Unlock()
	}
	return nil
}
