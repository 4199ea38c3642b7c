package say_test

import (
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// BenchmarkVoiceCommandToFirstAudio is the spoken reply's latency on the
// sim board with the espeak-ng engine: a voice_command event (the
// transcript of "turn on the headlight") → the local matcher → the
// headlight → the reply's first sample at the speaker. Speech-to-text is
// not in it (it is the server's time, after the speaker has stopped
// talking). ms/reply is the mean, max_ms the worst iteration.
func BenchmarkVoiceCommandToFirstAudio(b *testing.B) {
	r := start(b, "", "")
	var total, worst time.Duration
	for i := range b.N {
		before := len(r.say.Sim().Said())
		t0 := time.Now()
		r.n.Raise(worldmodel.Event{Time: t0, Kind: "voice_command", Source: r.mic, Priority: worldmodel.Normal,
			Data: map[string]any{"text": "turn on the headlight"}})
		var first time.Time
		for deadline := t0.Add(10 * time.Second); ; time.Sleep(200 * time.Microsecond) {
			if said := r.say.Sim().Said(); len(said) > before && !said[before].FirstAudio.IsZero() {
				first = said[before].FirstAudio
				break
			}
			if time.Now().After(deadline) {
				b.Fatalf("iteration %d: no reply", i)
			}
		}
		d := first.Sub(t0)
		total += d
		worst = max(worst, d)
		r.say.Speaker().Stop("next iteration")
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/reply")
	b.ReportMetric(float64(worst.Microseconds())/1000, "max_ms")
}
