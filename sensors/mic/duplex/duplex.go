// Package duplex links a robot's speaker to its microphone. A microphone
// next to a speaker hears the robot's own voice; while the robot speaks,
// and for a short tail after (the room's echo, the amplifier's release),
// the wake-word detector must not take that voice for a wake word. The
// speaker holds the Line while it plays; the microphone asks the Line
// whether the robot is speaking.
//
// Lines are named after the microphone sensor and live for the process,
// like the sensor registry, so that a skill and a sensor that never import
// each other meet here. The simulator also carries sound through a Line:
// what the sim speaker plays, the sim microphone hears.
package duplex

import (
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
)

// Line is one speaker/microphone pair.
type Line struct {
	mu      sync.Mutex
	playing int       // speakers playing now
	ended   time.Time // when the last playback ended
	air     []int16   // sim: sound played and not yet heard
	heard   int64     // sim: samples taken off the air
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

// Begin marks the start of a playback; end marks its end (call it once),
// at clk's time: the speaker's clock, which is the microphone's.
func (l *Line) Begin(clk clock.Clock) (end func()) {
	l.mu.Lock()
	l.playing++
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			l.playing--
			l.ended = clk.Now()
			l.mu.Unlock()
		})
	}
}

// Speaking reports whether something plays now or stopped less than tail
// before now.
func (l *Line) Speaking(now time.Time, tail time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.playing > 0 || (!l.ended.IsZero() && now.Sub(l.ended) < tail)
}

// maxAir bounds the sound in flight on a simulated line (10 s at 16 kHz,
// 320 kB): a sim speaker with no sim microphone listening must not grow
// memory, and a sim microphone running late on a loaded machine must not
// lose what it has yet to hear.
const maxAir = 160000

// Emit puts samples (16 kHz mono) on the air of a simulated line, for the
// sim microphone to hear. The oldest sound is dropped past maxAir.
func (l *Line) Emit(samples []int16) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.air = append(l.air, samples...)
	if over := len(l.air) - maxAir; over > 0 {
		l.air = append(l.air[:0], l.air[over:]...)
	}
}

// Hear adds up to len(p) samples of the air to p (mixing, with clipping)
// and takes them off the air.
func (l *Line) Hear(p []int16) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := min(len(p), len(l.air))
	for i := range n {
		p[i] = int16(max(-32768, min(32767, int32(p[i])+int32(l.air[i]))))
	}
	l.air = append(l.air[:0], l.air[n:]...)
	l.heard += int64(n)
}

// Heard counts the samples the simulated microphone has heard.
func (l *Line) Heard() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.heard
}
