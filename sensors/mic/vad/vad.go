// Package vad finds speech in a 16 kHz mono stream by comparing each 10 ms
// frame's energy with an adaptive noise floor.
//
// The floor is the minimum of the smoothed frame energy over the last two
// seconds ("minimum statistics"): a pause between words is enough to see
// the floor again, and when a fan switches on the floor follows within the
// window instead of the VAD reporting speech forever. The detector is
// deliberately permissive: its jobs are to keep the wake-word matcher idle
// in silence and to find the end of an utterance, not to decide what was
// said, and a missed onset costs more there than a false one.
package vad

import (
	"math"
	"time"
)

// FrameSamples is the frame length the VAD works on: 10 ms at 16 kHz.
const FrameSamples = 160

const frameDur = 10 * time.Millisecond

// Options tune the detector. Zero values take the defaults.
type Options struct {
	// OnsetDB is how far above the noise floor a frame must be to count
	// as speech. Default 6 dB; stationary noise fluctuates by about ±1 dB
	// per smoothed frame.
	OnsetDB float64
	// MinSpeech is how long energy must stay above onset before speech is
	// declared (rejects clicks). Default 30 ms.
	MinSpeech time.Duration
	// Hangover keeps speech on through short gaps (stops, pauses between
	// words). Default 250 ms.
	Hangover time.Duration
	// QuietDBFS: frames below this level are never speech, whatever the
	// floor (digital silence, a muted input). Default -65 dBFS.
	QuietDBFS float64
	// Window over which the noise floor is the minimum. Default 2 s.
	Window time.Duration
}

func (o *Options) fill() {
	if o.OnsetDB == 0 {
		o.OnsetDB = 6
	}
	if o.MinSpeech == 0 {
		o.MinSpeech = 30 * time.Millisecond
	}
	if o.Hangover == 0 {
		o.Hangover = 250 * time.Millisecond
	}
	if o.QuietDBFS == 0 {
		o.QuietDBFS = -65
	}
	if o.Window == 0 {
		o.Window = 2 * time.Second
	}
}

const subWindows = 8

// VAD is a streaming voice activity detector. Not safe for concurrent use.
type VAD struct {
	o         Options
	minSpeech int
	hangover  int
	subLen    int

	hpX, hpY float64 // high-pass filter state
	smooth   float64 // smoothed frame energy, dB
	started  bool

	subMin  [subWindows]float64 // minimum of each finished sub-window
	subN    int                 // finished sub-windows so far (saturates)
	subIdx  int
	curMin  float64
	curLen  int
	floor   float64
	above   int
	below   int
	speech  bool
	lastRaw float64
}

// New makes a detector.
func New(o Options) *VAD {
	o.fill()
	v := &VAD{o: o}
	v.minSpeech = max(1, int(o.MinSpeech/frameDur))
	v.hangover = max(1, int(o.Hangover/frameDur))
	v.subLen = max(1, int(o.Window/frameDur)/subWindows)
	v.Reset()
	return v
}

// Reset forgets everything learnt about the noise.
func (v *VAD) Reset() {
	o := v.o
	*v = VAD{o: o, minSpeech: v.minSpeech, hangover: v.hangover, subLen: v.subLen}
	v.curMin = math.Inf(1)
	v.floor = math.Inf(1)
}

// Process consumes one frame of FrameSamples samples and reports whether
// the stream is in speech after it.
func (v *VAD) Process(frame []int16) bool {
	// First-order high-pass at ~100 Hz: mains hum, handling rumble and DC
	// offsets of cheap ADCs carry energy but no speech.
	const a = 0.961 // exp(-2π·100/16000)
	var sum float64
	for _, s := range frame {
		x := float64(s)
		y := a * (v.hpY + x - v.hpX)
		v.hpX, v.hpY = x, y
		sum += y * y
	}
	ms := sum / float64(len(frame))
	db := 10 * math.Log10(ms/(32768*32768)+1e-12) // dBFS of the frame power
	v.lastRaw = db
	if !v.started {
		v.smooth = db
		v.started = true
	} else {
		// Attack fast, decay a little slower: onsets are not smeared, and
		// the floor estimate is not dragged down by single quiet frames.
		k := 0.5
		if db < v.smooth {
			k = 0.3
		}
		v.smooth += k * (db - v.smooth)
	}
	v.trackFloor(v.smooth)

	threshold := v.floor + v.o.OnsetDB
	loudEnough := v.smooth > v.o.QuietDBFS
	if v.smooth > threshold && loudEnough {
		v.above++
		v.below = 0
	} else {
		v.above = 0
		v.below++
	}
	switch {
	case !v.speech && v.above >= v.minSpeech:
		v.speech = true
	case v.speech && v.below >= v.hangover:
		v.speech = false
	}
	return v.speech
}

func (v *VAD) trackFloor(e float64) {
	if e < v.curMin {
		v.curMin = e
	}
	v.curLen++
	if v.curLen >= v.subLen {
		v.subMin[v.subIdx] = v.curMin
		v.subIdx = (v.subIdx + 1) % subWindows
		if v.subN < subWindows {
			v.subN++
		}
		v.curMin, v.curLen = math.Inf(1), 0
	}
	f := v.curMin
	for i := 0; i < v.subN; i++ {
		f = math.Min(f, v.subMin[i])
	}
	v.floor = f
}

// Speech reports the current state.
func (v *VAD) Speech() bool { return v.speech }

// FloorDBFS is the current noise floor estimate.
func (v *VAD) FloorDBFS() float64 { return v.floor }
