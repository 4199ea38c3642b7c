package wakeword

import (
	"math/rand/v2"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// Clip layout. A phrase clip holds the phrase ending at phraseEnd (plus up
// to a hop of jitter) and afterPhrase of sound after it: the window that
// ends with the phrase (1.28 s) and the frontend's context before it
// (0.76 s) fit in front. A stream clip is utterances one after another,
// every window of which is a negative.
const (
	phraseEnd   = audio.Rate * 21 / 10 // 2.1 s
	afterPhrase = audio.Rate * 5 / 10  // 0.5 s
	clipLen     = phraseEnd + audio.Rate/10 + afterPhrase
	// A window is a positive when it ends within posAfter of the phrase's
	// end, ignored when it ends within ignoreBefore before it (a window
	// that holds nearly all the phrase is neither), and a negative
	// before that (the phrase's first word alone, or speech before it).
	posAfter     = audio.Rate * 4 / 10
	ignoreBefore = audio.Rate * 32 / 100
)

var trainNoises = []string{"", "white", "pink", "babble", "babble"}

// randomScene draws a room: a background (none, white, pink or babble)
// 0–25 dB under the speech, reverberation in four clips of ten, a
// microphone colour in half, and a level.
func randomScene(r *rand.Rand, length int) scene {
	return scene{length: length, noise: pick(r, trainNoises), snr: 25 * r.Float64(),
		reverb: r.IntN(10) < 4, eq: r.IntN(2) == 0, peak: -30 + 27*r.Float64(), seed: r.Uint64()}
}

// placeEnding puts x so that it ends at phraseEnd plus jitter, and returns
// its end sample.
func placeEnding(r *rand.Rand, sc *scene, x []int16) int {
	end := phraseEnd + r.IntN(audio.Rate/10)
	sc.parts = append(sc.parts, placed{x: x, at: end - len(x)})
	return end
}

// placeBefore puts other speech before the sample `before`, with a pause,
// as in "… turn it off. Hey robot".
func placeBefore(r *rand.Rand, sc *scene, x []int16, before int) {
	gap := 3200 + r.IntN(8000) // 0.2–0.7 s
	sc.parts = append(sc.parts, placed{x: x, at: before - gap - len(x)})
}

// stream lays utterances end to end with pauses of 0.1–0.6 s into a scene
// of their total length.
func stream(r *rand.Rand, xs [][]int16) scene {
	at := audio.Rate / 5
	var parts []placed
	for _, x := range xs {
		parts = append(parts, placed{x: x, at: at})
		at += len(x) + audio.Rate/10 + r.IntN(audio.Rate/2)
	}
	sc := randomScene(r, at)
	sc.parts = parts
	return sc
}
