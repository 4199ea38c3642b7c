package wakeword_test

import (
	"testing"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// The product's frontend behind the Frontend interface: one embedding per
// EmbedHop once it has heard 0.8 s, and Reset starts the stream over.
func TestSpeechFrontend(t *testing.T) {
	fe, err := wakeword.NewSpeechFrontend()
	if err != nil {
		t.Fatal(err)
	}
	x := make([]int16, 2*audio.Rate)
	audio.NewNoise("pink", -30, 1).Fill(x)
	var a []wakeword.Embedding
	for i := 0; i < len(x); i += 700 {
		a = fe.Push(a, x[i:min(len(x), i+700)])
	}
	if want := len(x)/wakeword.EmbedHop - 9; len(a) != want {
		t.Fatalf("%d embeddings from 2 s, want %d", len(a), want)
	}
	fe.Reset()
	b := fe.Push(nil, x)
	if len(b) != len(a) || b[len(b)-1] != a[len(a)-1] {
		t.Error("after Reset the same audio gives other embeddings")
	}
}

// BenchmarkHeadsSpeech is the detector's cost with sound present over the
// product's frontend, as a real-time factor on one core.
func BenchmarkHeadsSpeech(b *testing.B) {
	fe, err := wakeword.NewSpeechFrontend()
	if err != nil {
		b.Fatal(err)
	}
	x := busy()
	d := wakeword.NewHeads([]*wakeword.Head{toneHead(b)}, fe, wakeword.HeadOptions{})
	var dets []wakeword.Detection
	b.ResetTimer()
	for range b.N {
		dets = d.Process(dets[:0], x, nil)
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/10e9, "rtf")
}
