package say

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
)

// Speaker says one thing at a time: a new utterance cuts off the one
// playing (the newest answer is the one that matters), and Stop cuts off
// whatever plays (barge-in, e-stop).
type Speaker struct {
	Engine Engine
	Sink   Sink
	Line   *duplex.Line // the microphone to keep deaf to our voice; nil: none
	Clock  clock.Clock
	Log    *slog.Logger

	mu  sync.Mutex
	cur *utterance
}

type utterance struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

// Report says how an utterance went.
type Report struct {
	FirstAudio time.Duration // from Say to the first sample played
	Duration   time.Duration // from Say to the end
	Samples    int           // 16 kHz samples played
}

// ErrInterrupted is the cause of an utterance cut off by Stop or by a newer
// utterance; it wraps the reason.
var ErrInterrupted = errors.New("speech interrupted")

// Say speaks text in voice (the engine's default when empty) at volume
// (0..1] and returns when it has been played, cut off, or ctx ended.
func (s *Speaker) Say(ctx context.Context, text, voice string, volume float64) (Report, error) {
	start := s.Clock.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	u := &utterance{cancel: cancel, done: make(chan struct{})}
	defer close(u.done)
	s.mu.Lock()
	prev := s.cur
	s.cur = u
	s.mu.Unlock()
	if prev != nil {
		prev.cancel(errors.Join(ErrInterrupted, errors.New("a newer utterance")))
		<-prev.done
	}
	defer func() {
		s.mu.Lock()
		if s.cur == u {
			s.cur = nil
		}
		s.mu.Unlock()
	}()

	var rep Report
	player, err := s.Sink.Start(ctx, text)
	if err != nil {
		return rep, err
	}
	defer player.Close()
	if s.Line != nil {
		// Held from the start of synthesis, not only of sound: the
		// microphone must already be deaf when the first sample plays.
		defer s.Line.Begin(s.Clock)()
	}
	gain := float32(math.Min(1, math.Max(0, volume)))
	var scaled []int16
	err = s.Engine.Speak(ctx, text, voice, func(p []int16) error {
		if rep.Samples == 0 {
			rep.FirstAudio = s.Clock.Now().Sub(start)
		}
		if gain < 1 {
			scaled = scaled[:0]
			for _, v := range p {
				scaled = append(scaled, int16(float32(v)*gain))
			}
			p = scaled
		}
		rep.Samples += len(p)
		return player.Write(p)
	})
	if err == nil {
		err = player.Finish()
	}
	rep.Duration = s.Clock.Now().Sub(start)
	if cause := context.Cause(ctx); ctx.Err() != nil && cause != nil {
		err = cause
	}
	return rep, err
}

// Stop cuts off the utterance playing, if any, and waits until it is
// silent; it reports whether something was playing.
func (s *Speaker) Stop(why string) bool {
	u := s.Cut(why)
	if u != nil {
		<-u
	}
	return u != nil
}

// Cut cuts off the utterance playing without waiting (the e-stop path must
// not wait for a sound card); the returned channel, nil when nothing
// played, is closed once it is silent.
func (s *Speaker) Cut(why string) <-chan struct{} {
	s.mu.Lock()
	u := s.cur
	s.mu.Unlock()
	if u == nil {
		return nil
	}
	u.cancel(errors.Join(ErrInterrupted, errors.New(why)))
	s.Log.Info("speech stopped", "why", why)
	return u.done
}

// Speaking reports whether an utterance is under way.
func (s *Speaker) Speaking() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur != nil
}
