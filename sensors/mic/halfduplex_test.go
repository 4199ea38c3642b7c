package mic

import (
	"fmt"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// While the robot's speaker plays, a wake word (enrolled_a scores about
// 0.96) is ignored in mode mute, accepted in mode raise when it scores
// above the raised threshold, ignored when it does not, and heard as usual
// once the speaker has stopped.
func TestHalfDuplexModes(t *testing.T) {
	t.Parallel()
	for i, c := range []struct {
		mode      string
		threshold float64
		speaking  bool
		wakes     bool
	}{
		{"mute", 0.95, true, false},
		{"raise", 0.85, true, true},
		{"raise", 0.99, true, false},
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
    sim: {noise: pink, noise_dbfs: -60, period: 0s, utterances: [{file: testdata/speech/pos/enrolled_a.wav, at: 500ms}]}
    wakeword: {templates: testdata/wakewords}
    half_duplex: {mode: %s, threshold: %v}
`, name, c.mode, c.threshold))
		if c.speaking {
			end := duplex.Get(name).Begin()
			defer end()
		}
		rec := sensortest.NewRecorder()
		stop := sensortest.Run(t, s, rec)
		// 3 s of audio (level readings at 10 Hz) cover the phrase and more.
		rec.WaitFor(t, 10*time.Second, "3 s of audio", func() bool { return len(rec.Observations(name+".rms_dbfs")) >= 30 })
		stop()
		if woke := len(rec.Events(EventWakeWord)) > 0; woke != c.wakes {
			t.Errorf("%+v: woke %v", c, woke)
		}
	}
}

// The same with the shipped head: a wake word said while the robot speaks
// (flite's awb, a voice the head never trained on) is ignored in mode
// mute and heard once the speaker has stopped.
func TestHalfDuplexMutesTheHead(t *testing.T) {
	t.Parallel()
	for i, speaking := range []bool{true, false} {
		name := fmt.Sprintf("hdh%d", i)
		s := newSensor(t, fmt.Sprintf(`
- name: %s
  kind: mic
  options:
    source: sim
    pace: false
    sim: {noise: pink, noise_dbfs: -60, period: 0s, utterances: [{file: testdata/speech/pos/flite_awb.wav, at: 2500ms}]}
    half_duplex: {mode: mute}
`, name))
		if len(s.Heads()) != 1 {
			t.Fatal("no head")
		}
		if speaking {
			end := duplex.Get(name).Begin()
			defer end()
		}
		rec := sensortest.NewRecorder()
		stop := sensortest.Run(t, s, rec)
		rec.WaitFor(t, 20*time.Second, "5 s of audio", func() bool { return len(rec.Observations(name+".rms_dbfs")) >= 50 })
		stop()
		if woke := len(rec.Events(EventWakeWord)) > 0; woke == speaking {
			t.Errorf("speaking %v: woke %v", speaking, woke)
		}
	}
}
