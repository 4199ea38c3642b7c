package wakeword_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// The shipped head as the mic runs it, for docs/bench/wake-word.md's cost
// figures (one core: -cpu 1).

// BenchmarkHeadRealtimeFactor is the shipped head's CPU time per second of
// audio in the worst case for it: talk almost all the time (the gate is
// open and the frontend runs throughout), in pink noise 10 dB under it.
func BenchmarkHeadRealtimeFactor(b *testing.B) {
	x := talk(b)
	d := shippedHeads(b)
	d.Process(nil, x[:3*audio.Rate], nil) // the VAD learns the room first
	var dets []wakeword.Detection
	b.ResetTimer()
	for b.Loop() {
		dets = d.Process(dets[:0], x, nil)
	}
	secs := float64(len(x)) / audio.Rate
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/secs, "rtf")
	b.ReportMetric(secs, "audio-s/op")
}

// BenchmarkHeadSilence is its cost in a quiet room (pink noise at
// -60 dBFS): the VAD keeps the frontend shut, so this is the VAD and the
// pre-roll ring.
func BenchmarkHeadSilence(b *testing.B) {
	x := make([]int16, 10*audio.Rate)
	audio.NewNoise("pink", -60, 3).Fill(x)
	d := shippedHeads(b)
	var dets []wakeword.Detection
	b.ResetTimer()
	for b.Loop() {
		dets = d.Process(dets[:0], x, nil)
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/10, "rtf")
}

func shippedHeads(tb testing.TB) *wakeword.Heads {
	h, err := wakeword.Builtin()
	if err != nil {
		tb.Fatal(err)
	}
	fe, err := wakeword.NewSpeechFrontend()
	if err != nil {
		tb.Fatal(err)
	}
	return wakeword.NewHeads([]*wakeword.Head{h}, fe, wakeword.HeadOptions{})
}

// talk is about a minute of the test clips one after another, 150 ms
// apart, after 3 s of the background alone, in pink noise 10 dB under
// the speech.
func talk(tb testing.TB) []int16 {
	var x []int16
	x = append(x, make([]int16, 3*audio.Rate)...)
	names := []string{"pos/enrolled_a.wav", "neg/turn_on_the_headlight.wav", "neg/what_time_is_it.wav", "pos/unseen_gb_f2.wav", "neg/hey_robin.wav", "neg/open_the_garage_door.wav"}
	var level float64
	for len(x) < 58*audio.Rate {
		for _, n := range names {
			c, err := audio.ReadWAVFile(filepath.Join("../testdata/speech", n))
			if err != nil {
				tb.Fatal(err)
			}
			if level == 0 {
				level = audio.DBFS(audio.RMS(c))
			}
			x = append(x, c...)
			x = append(x, make([]int16, int(150*time.Millisecond.Seconds()*audio.Rate))...)
		}
	}
	x = append(x, make([]int16, audio.Rate)...)
	n := make([]int16, len(x))
	audio.NewNoise("pink", level-10, 1).Fill(n)
	for i := range x {
		x[i] = int16(max(-32768, min(32767, int32(x[i])+int32(n[i]))))
	}
	return x
}
