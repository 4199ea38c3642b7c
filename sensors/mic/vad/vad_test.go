package vad

import (
	"math"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// run feeds s frame by frame and returns the state after each frame.
func run(v *VAD, s []int16) []bool {
	out := make([]bool, 0, len(s)/FrameSamples)
	for i := 0; i+FrameSamples <= len(s); i += FrameSamples {
		out = append(out, v.Process(s[i:i+FrameSamples]))
	}
	return out
}

func count(b []bool) int {
	n := 0
	for _, x := range b {
		if x {
			n++
		}
	}
	return n
}

func speech(t *testing.T, name string, gainDB float64) []int16 {
	t.Helper()
	s, err := audio.ReadWAVFile("../testdata/speech/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return scale(s, gainDB)
}

func scale(s []int16, db float64) []int16 {
	g := math.Pow(10, db/20)
	out := make([]int16, len(s))
	for i, v := range s {
		out[i] = int16(max(-32768, min(32767, float64(v)*g)))
	}
	return out
}

func noise(colour string, dbfs float64, sec float64, seed uint64) []int16 {
	s := make([]int16, int(sec*audio.Rate))
	audio.NewNoise(colour, dbfs, seed).Fill(s)
	return s
}

func add(a, b []int16) []int16 {
	out := make([]int16, len(a))
	for i := range a {
		v := int32(a[i])
		if i < len(b) {
			v += int32(b[i])
		}
		out[i] = int16(max(-32768, min(32767, v)))
	}
	return out
}

func TestDigitalSilenceIsNeverSpeech(t *testing.T) {
	v := New(Options{})
	if n := count(run(v, make([]int16, 5*audio.Rate))); n != 0 {
		t.Fatalf("%d speech frames in silence", n)
	}
}

func TestSpeechInNoise(t *testing.T) {
	for _, tc := range []struct {
		colour string
		snr    float64
	}{{"white", 20}, {"pink", 10}, {"pink", 5}, {"white", 5}} {
		clip := speech(t, "neg/turn_on_the_headlight.wav", 0)
		lead, tail := 3*audio.Rate, 2*audio.Rate
		sig := make([]int16, lead+len(clip)+tail)
		copy(sig[lead:], clip)
		// Noise level relative to the clip's RMS.
		nl := audio.DBFS(audio.RMS(clip)) - tc.snr
		s := add(sig, noise(tc.colour, nl, float64(len(sig))/audio.Rate, 1))
		st := run(New(Options{}), s)

		startF, endF := lead/FrameSamples, (lead+len(clip))/FrameSamples
		// No speech in the lead-in once the floor is known (first 0.5 s
		// is learning).
		if n := count(st[50:startF]); n != 0 {
			t.Errorf("%s %v dB: %d speech frames in noise before the utterance", tc.colour, tc.snr, n)
		}
		// Most of the utterance is speech: the detector gates the wake
		// word, so a weak one at 5 dB must still open the gate.
		frac := float64(count(st[startF:endF])) / float64(endF-startF)
		if frac < 0.6 {
			t.Errorf("%s %v dB: only %.0f%% of the utterance detected", tc.colour, tc.snr, 100*frac)
		}
		// Onset within 100 ms of the clip start (clip is trimmed to speech).
		on := -1
		for i := startF - 5; i < endF; i++ {
			if st[i] {
				on = i
				break
			}
		}
		if on < 0 || on > startF+10 {
			t.Errorf("%s %v dB: onset at frame %d, utterance starts at %d", tc.colour, tc.snr, on, startF)
		}
		// Back to silence within hangover + 150 ms after the end, and stays.
		if n := count(st[endF+40:]); n != 0 {
			t.Errorf("%s %v dB: %d speech frames after the utterance ended", tc.colour, tc.snr, n)
		}
	}
}

func TestFloorFollowsANoiseStep(t *testing.T) {
	// A fan switches on (+25 dB) and stays on: after the floor window the
	// VAD must stop calling it speech.
	quiet := noise("pink", -65, 2, 1)
	loud := noise("pink", -40, 6, 2)
	st := run(New(Options{}), append(quiet, loud...))
	step := len(quiet) / FrameSamples
	if !st[step+5] {
		t.Error("the noise step itself was not flagged (it is a sudden sound)")
	}
	settle := step + 250 + 30 // window 2 s + hangover + smoothing
	if n := count(st[settle:]); n != 0 {
		t.Fatalf("%d speech frames after the floor should have adapted", n)
	}
}
