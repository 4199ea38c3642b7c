// Package duplex links a robot's speaker to its microphone. A microphone
// next to a speaker hears the robot's own voice; while the robot speaks,
// and for a short tail after (the room's echo, the amplifier's release),
// the wake-word detector must not take that voice for a wake word. The
// speaker holds the Line while it plays; the microphone asks the Line
// whether the robot was speaking when the audio in question was captured
// (which, on a loaded machine, can be a while before it is processed).
//
// Lines are named after the microphone sensor and live for the process,
// like the sensor registry, so that a skill and a sensor that never import
// each other meet here. The simulator also carries sound through a Line:
// what the sim speaker plays, the sim microphone hears.
package duplex

import (
	"errors"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// Line is one speaker/microphone pair.
type Line struct {
	mu      sync.Mutex
	spans   []*span       // playbacks under way, and the last keptSpans that ended, by start
	air     []*Playback   // sim: sounds played and not yet heard, oldest first
	unheard int           // sim: samples on the air
	heardTo time.Time     // sim: the end of what the microphone heard
	heard   int64         // sim: samples taken off the air
	more    chan struct{} // sim: closed when sound is added or a playback ends
}

var (
	mu    sync.Mutex
	lines = map[string]*Line{}
)

// Get returns the line of the microphone named name, creating it.
func Get(name string) *Line {
	mu.Lock()
	defer mu.Unlock()
	l := lines[name]
	if l == nil {
		l = &Line{}
		lines[name] = l
	}
	return l
}

// span is one playback: from begin to end (zero while it plays).
type span struct{ begin, end time.Time }

// keptSpans is how many ended playbacks a Line remembers. The microphone
// asks about audio it captured a moment ago, seconds at most when it runs
// late: a few utterances back is plenty, and memory stays bounded.
const keptSpans = 16

// Begin marks the start of a playback; end marks its end (call it once),
// at clk's time: the speaker's clock, which is the microphone's.
func (l *Line) Begin(clk clock.Clock) (end func()) {
	l.mu.Lock()
	sp := &span{begin: clk.Now()}
	l.spans = append(l.spans, sp)
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			sp.end = clk.Now()
			l.forget()
			l.mu.Unlock()
		})
	}
}

// forget drops the oldest ended playbacks beyond keptSpans.
func (l *Line) forget() {
	ended := 0
	for _, sp := range l.spans {
		if !sp.end.IsZero() {
			ended++
		}
	}
	keep := l.spans[:0]
	for _, sp := range l.spans {
		if !sp.end.IsZero() && ended > keptSpans {
			ended--
			continue
		}
		keep = append(keep, sp)
	}
	clear(l.spans[len(keep):])
	l.spans = keep
}

// Speaking reports whether something was playing at at, or had stopped
// less than tail before it. at is when the audio in question was
// captured, not when it is looked at: a microphone running behind asks
// about the past, and audio captured before a playback began is not the
// robot's voice, however late it is processed.
func (l *Line) Speaking(at time.Time, tail time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, sp := range l.spans {
		if !at.Before(sp.begin) && (sp.end.IsZero() || at.Sub(sp.end) < tail) {
			return true
		}
	}
	return false
}

// maxAir bounds the sound in flight on a simulated line (10 s at 16 kHz,
// 320 kB): a sim speaker with no sim microphone listening must not grow
// memory, and a sim microphone running late on a loaded machine must not
// lose what it has yet to hear.
const maxAir = 160000

// maxStall bounds how long a sim microphone waits for the rest of a
// playback (see Hear): a feed stalled longer is heard as silence, as on a
// real device.
const maxStall = 5 * time.Second

// Playback is one sound a sim speaker plays on a Line. Its samples follow
// each other without a gap, however late the speaker's writes come: the
// simulated speaker is a device whose buffer never runs dry (a real one
// shares a hardware clock with the microphone; two goroutines on a loaded
// machine do not).
type Playback struct {
	l       *Line
	at      time.Time // when samples[0] sounds
	samples []int16   // played and not yet heard
	open    bool      // more may come
}

// Play starts a playback whose first sample sounds at at, on the clock
// the sim microphone reads by (never before what it has already heard).
func (l *Line) Play(at time.Time) *Playback {
	l.mu.Lock()
	defer l.mu.Unlock()
	if at.Before(l.heardTo) {
		at = l.heardTo
	}
	pb := &Playback{l: l, at: at, open: true}
	l.air = append(l.air, pb)
	return pb
}

// Emit plays samples (16 kHz mono) right after the ones before. The oldest
// sound on the line is dropped past maxAir.
func (pb *Playback) Emit(samples []int16) {
	l := pb.l
	l.mu.Lock()
	defer l.mu.Unlock()
	pb.samples = append(pb.samples, samples...)
	l.unheard += len(samples)
	for i := 0; l.unheard > maxAir; i++ {
		old := l.air[i]
		k := min(l.unheard-maxAir, len(old.samples))
		old.samples = old.samples[k:]
		old.at = old.at.Add(samplesDur(k))
		l.unheard -= k
	}
	l.prune()
	l.notify()
}

// End says no more samples come (call it once; again is harmless).
func (pb *Playback) End() {
	l := pb.l
	l.mu.Lock()
	defer l.mu.Unlock()
	pb.open = false
	l.prune()
	l.notify()
}

func samplesDur(n int) time.Duration { return time.Duration(n) * time.Second / audio.Rate }

// prune forgets the playbacks that ended and were heard.
func (l *Line) prune() {
	keep := l.air[:0]
	for _, pb := range l.air {
		if pb.open || len(pb.samples) > 0 {
			keep = append(keep, pb)
		}
	}
	clear(l.air[len(keep):])
	l.air = keep
}

// notify wakes a Hear waiting for sound.
func (l *Line) notify() {
	if l.more != nil {
		close(l.more)
		l.more = nil
	}
}

// Hear adds to p (mixing, with clipping) the sound that plays from at for
// len(p) samples, and takes it off the air. While a playback that has
// reached the window is still open and has not yet covered it, Hear waits
// for its next samples (at most maxStall on clk, or until closed), so the
// microphone hears the speaker's sound whole whichever of the two
// goroutines the machine runs late. A zero at (a microphone that does not
// run on the clock) hears what is on the air at once, without waiting.
func (l *Line) Hear(clk clock.Clock, at time.Time, p []int16, closed <-chan struct{}) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	end := at.Add(samplesDur(len(p)))
	var stall clock.Timer
	for stalled := false; !stalled && !at.IsZero() && l.behind(end); {
		if stall == nil {
			stall = clk.NewTimer(maxStall)
			defer stall.Stop()
		}
		if l.more == nil {
			l.more = make(chan struct{})
		}
		more := l.more
		l.mu.Unlock()
		select {
		case <-more:
		case <-stall.C():
			stalled = true
		case <-closed:
			l.mu.Lock()
			return ErrClosed
		}
		l.mu.Lock()
	}
	next := 0 // off the clock, the sounds are heard one after another
	for _, pb := range l.air {
		k := next
		if !at.IsZero() {
			k = max(0, int(pb.at.Sub(at)/samplesDur(1)))
		}
		if k >= len(p) {
			continue
		}
		n := min(len(p)-k, len(pb.samples))
		for i := range n {
			p[k+i] = int16(max(-32768, min(32767, int32(p[k+i])+int32(pb.samples[i]))))
		}
		pb.samples = pb.samples[n:]
		if pb.at = pb.at.Add(samplesDur(n)); !at.IsZero() {
			pb.at = end // what comes next sounds after this window
		}
		next = k + n
		l.unheard -= n
		l.heard += int64(n)
	}
	l.prune()
	if end.After(l.heardTo) {
		l.heardTo = end
	}
	return nil
}

// behind reports whether an open playback that has reached the window
// ending at end has not yet been played up to it.
func (l *Line) behind(end time.Time) bool {
	for _, pb := range l.air {
		if pb.open && pb.at.Before(end) && pb.at.Add(samplesDur(len(pb.samples))).Before(end) {
			return true
		}
	}
	return false
}

// ErrClosed is Hear's error when the microphone closed while it waited.
var ErrClosed = errors.New("duplex: microphone closed")

// Heard counts the samples the simulated microphone has heard.
func (l *Line) Heard() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.heard
}
