package mic

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// While the robot's speaker plays, a wake word is ignored in mode mute,
// accepted in mode raise when it scores above the raised threshold,
// ignored when it does not, and heard as usual once the speaker has
// stopped. The shipped head, at model_threshold 0.5, fires on this take of
// "hey robot" with score 0.844 (the input is the same every run).
func TestHalfDuplexModes(t *testing.T) {
	t.Parallel()
	for i, c := range []struct {
		mode      string
		threshold float64
		speaking  bool
		wakes     bool
	}{
		{"mute", 0.95, true, false},
		{"raise", 0.8, true, true},
		{"raise", 0.9, true, false},
		{"off", 0.95, true, true},
		{"mute", 0.95, false, true},
	} {
		name := fmt.Sprintf("hd%d", i)
		s := newSensor(t, fmt.Sprintf(`
- name: %s
  kind: mic
  options:
    source: sim
    pace: false
    sim: {noise: pink, noise_dbfs: -60, period: 0s, utterances: [{file: testdata/speech/pos/enrolled_b.wav, at: 2500ms}]}
    wakeword: {model_threshold: 0.5}
    half_duplex: {mode: %s, threshold: %v}
`, name, c.mode, c.threshold))
		// 5 s of audio cover the phrase and more.
		if woke := wokeWhile(t, s, name, c.speaking, 5, 20*time.Second); woke != c.wakes {
			t.Errorf("%+v: woke %v", c, woke)
		}
	}
}

// wokeWhile runs the mic sensor s for secs seconds of audio (its level
// readings come at 10 Hz), with the robot's speaker playing if speaking,
// and reports whether it raised a wake word.
func wokeWhile(t *testing.T, s *Sensor, name string, speaking bool, secs int, within time.Duration) bool {
	t.Helper()
	if speaking {
		end := duplex.Get(name).Begin(clock.Real())
		defer end()
	}
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	rec.WaitFor(t, within, fmt.Sprintf("%d s of audio", secs), func() bool { return len(rec.Observations(name+".rms_dbfs")) >= 10*secs })
	stop()
	return len(rec.Events(EventWakeWord)) > 0
}
