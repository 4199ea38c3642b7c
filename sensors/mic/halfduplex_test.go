package mic

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
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

// A microphone that runs late still judges the robot's voice by when it
// was captured. The robot's speaker plays from 2 s to 3.5 s while someone
// (the robot) says the wake phrase at 2.5 s; the audio goroutine is held
// up (its sink blocks, as on a loaded machine) from 0.1 s of audio until
// the clock reads a minute, long after the speaker's end and tail, and
// then gets the rest of the paced recording at once, each read stamped
// with its capture time. Judged at the time it is processed, the phrase
// would wake the robot; judged at its capture time, it is muted. A
// playback that ended a tail before the phrase, or began after it,
// mutes nothing.
func TestHalfDuplexJudgesCaptureTime(t *testing.T) {
	t.Parallel()
	wav := sceneWAV(t, 5*time.Second, [][]int16{speech(t, "pos/enrolled_b.wav")}, []time.Duration{2500 * time.Millisecond})
	for i, c := range []struct {
		from, to time.Duration // the robot's playback
		wakes    bool
	}{
		{2 * time.Second, 3500 * time.Millisecond, false},
		{500 * time.Millisecond, 2 * time.Second, true},
		{4 * time.Second, 4500 * time.Millisecond, true},
	} {
		name := fmt.Sprintf("late%d", i)
		cfg := sensortest.Board(t, "sim", fmt.Sprintf(`
- name: %s
  kind: mic
  options:
    source: wav
    file: %s
    pace: true
    wakeword: {model_threshold: 0.5}
    half_duplex: {mode: mute, tail: 300ms}
`, name, wav))
		t0 := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
		clk := clock.NewFake(t0)
		cfg.Clock = clk
		s, err := sensors.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		sink := &heldSink{Recorder: sensortest.NewRecorder(), held: make(chan struct{}), release: make(chan struct{})}
		stop := sensortest.Run(t, s, sink)
		clk.BlockUntil(1) // the first read waits for its samples
		clk.Advance(100 * time.Millisecond)
		<-sink.held // the first level reading: the audio goroutine is stuck
		clk.Advance(c.from - 100*time.Millisecond)
		end := duplex.Get(name).Begin(clk)
		clk.Advance(c.to - c.from)
		end()
		clk.Advance(time.Minute - c.to)
		close(sink.release)
		sink.WaitFor(t, 20*time.Second, "5 s of audio", func() bool { return len(sink.Observations(name+".rms_dbfs")) >= 50 })
		stop()
		woke := sink.Events(EventWakeWord)
		if len(woke) > 0 != c.wakes {
			t.Errorf("robot playing %v–%v: woke %v, want %v", c.from, c.to, woke, c.wakes)
		}
		// The wake word's time is when it was said, not a minute later.
		if len(woke) > 0 && (woke[0].Time.Before(t0.Add(3*time.Second)) || woke[0].Time.After(t0.Add(4*time.Second))) {
			t.Errorf("wake word at %v into the recording", woke[0].Time.Sub(t0))
		}
	}
}

// heldSink holds the first observation until released: an audio goroutine
// that falls behind.
type heldSink struct {
	*sensortest.Recorder
	once          sync.Once
	held, release chan struct{}
}

func (h *heldSink) Observe(o worldmodel.Observation) {
	h.once.Do(func() {
		close(h.held)
		<-h.release
	})
	h.Recorder.Observe(o)
}
