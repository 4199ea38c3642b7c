package wakeword

import "time"

// Detection is one wake word found in the stream. Times are offsets from
// the first sample the detector saw.
type Detection struct {
	Name       string
	Score      float64
	Start, End time.Duration // the window the head scored
	At         time.Duration // when it was decided: End, or later for a window of the pre-roll
}

// HopSamples is the detector's step: one VAD frame, 10 ms at 16 kHz.
const HopSamples = 160

// DefaultRefractory is how long after a detection the same phrase is not
// reported again, unless HeadOptions say otherwise.
const DefaultRefractory = 1500 * time.Millisecond

func hopTime(h int64) time.Duration { return time.Duration(h) * 10 * time.Millisecond }

// hops is d in 10 ms hops, rounded down.
func hops(d time.Duration) int64 { return int64(d / (10 * time.Millisecond)) }
