package mic

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/i2c/i2ckit/kittest"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// recorder is a Sink that keeps everything.
type recorder struct {
	mu     sync.Mutex
	obs    []worldmodel.Observation
	events []worldmodel.Event
	signal chan struct{}
}

func newRecorder() *recorder { return &recorder{signal: make(chan struct{}, 1000)} }

func (r *recorder) Observe(o worldmodel.Observation) {
	r.mu.Lock()
	r.obs = append(r.obs, o)
	r.mu.Unlock()
}

func (r *recorder) Raise(e worldmodel.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *recorder) kinds(kind string) []worldmodel.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []worldmodel.Event
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (r *recorder) latest(source string) (worldmodel.Observation, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var last worldmodel.Observation
	n := 0
	for _, o := range r.obs {
		if o.Source == source {
			last = o
			n++
		}
	}
	return last, n
}

// waitFor waits until kind has been raised n times.
func (r *recorder) waitFor(t *testing.T, kind string, n int, d time.Duration) []worldmodel.Event {
	t.Helper()
	deadline := time.After(d)
	for {
		if es := r.kinds(kind); len(es) >= n {
			return es
		}
		select {
		case <-r.signal:
		case <-deadline:
			r.mu.Lock()
			defer r.mu.Unlock()
			var ks []string
			for _, e := range r.events {
				ks = append(ks, e.Kind+": "+e.Message)
			}
			t.Fatalf("no %d× %s within %v; events: %s", n, kind, d, strings.Join(ks, " | "))
		}
	}
}

func speech(t *testing.T, name string) []int16 {
	t.Helper()
	s, err := audio.ReadWAVFile(filepath.Join("testdata/speech", name))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// sceneWAV writes a recording: pink background (SNR 20 dB re the first
// clip), clips at the given times, and returns its path.
func sceneWAV(t *testing.T, total time.Duration, clips [][]int16, at []time.Duration) string {
	t.Helper()
	sig := make([]int16, int(total.Seconds()*audio.Rate))
	for i, c := range clips {
		copy(sig[int(at[i].Seconds()*audio.Rate):], c)
	}
	n := make([]int16, len(sig))
	audio.NewNoise("pink", audio.DBFS(audio.RMS(clips[0]))-20, 7).Fill(n)
	for i := range sig {
		sig[i] = int16(max(-32768, min(32767, int32(sig[i])+int32(n[i]))))
	}
	return writeWAV(t, "scene.wav", sig)
}

func newSensor(t *testing.T, block string) *Sensor {
	t.Helper()
	s, err := sensors.New(kittest.Board(t, "sim", block))
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Sensor)
}

func run(t *testing.T, s *Sensor, out sensors.Sink) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, out) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("Run did not return within 3 s of cancellation")
		}
	}
}

func TestOptions(t *testing.T) {
	s := newSensor(t, "- name: mic\n  kind: mic\n  options: {source: sim, wakeword: {templates: testdata/wakewords}}")
	o := s.Opts()
	if o.LoudDBFS != -3 || o.STT.EndSilence != 800*time.Millisecond || o.WakeWord.Refractory != 1500*time.Millisecond || !o.Pace {
		t.Fatalf("defaults not applied: %+v", o)
	}
	if len(s.Models()) != 1 || s.Models()[0].Name != "hey_robot" {
		t.Fatalf("models %v", s.Models())
	}
	for _, tc := range []struct{ block, want string }{
		{"options: {source: tape}", "source \"tape\""},
		{"options: {source: exec}", "needs a command"},
		{"options: {source: exec, command: [arecord], format: {encoding: s12}}", "encoding"},
		{"options: {source: wav}", "needs a file"},
		{"options: {source: sim, sim: {noise: brown}}", "sim.noise"},
		{"options: {source: sim, wakeword: {detector: wyoming}}", "needs wakeword.wyoming"},
		{"options: {source: sim, wakeword: {threshold: 1.2}}", "threshold"},
		{"options: {source: sim, loud_priority: urgent}", "loud_priority"},
		{"options: {source: sim, wakeword: {templates: /nonexistent}}", "no wake word enrolled"},
		{"options: {source: sim, wakeword: {templates: testdata/wakewords, names: [hey_toaster]}}", "not enrolled"},
		{"options: {source: sim, wakword: {}}", "unknown"},
	} {
		cfg, err := kittest.ParseBoard("sim", "- name: mic\n  kind: mic\n  "+tc.block)
		if err == nil {
			_, err = sensors.New(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.block, err, tc.want)
		}
	}
	// The wyoming detector without templates still builds (with a warning):
	// the templates are only its fallback.
	newSensor(t, "- name: mic\n  kind: mic\n  options: {source: sim, wakeword: {detector: wyoming, wyoming: 127.0.0.1:10400, templates: /nonexistent}}")
}

func TestWakeWordThenVoiceCommand(t *testing.T) {
	srv, err := wyomingtest.Start(&wyomingtest.Server{Split: 11, Transcribe: func(a []int16) string {
		if len(a) < audio.Rate/2 {
			return ""
		}
		return "turn on the headlight"
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cmd := speech(t, "neg/turn_on_the_headlight.wav")
	wav := sceneWAV(t, 8*time.Second, [][]int16{speech(t, "pos/enrolled_a.wav"), cmd},
		[]time.Duration{3 * time.Second, 4 * time.Second})
	s := newSensor(t, fmt.Sprintf(`
- name: mic
  kind: mic
  options:
    source: wav
    file: %s
    pace: false
    wakeword: {templates: testdata/wakewords}
    stt: {wyoming: %s, language: en}
`, wav, srv.Addr()))
	rec := newRecorder()
	stop := run(t, s, rec)
	defer stop()

	w := rec.waitFor(t, EventWakeWord, 1, 10*time.Second)[0]
	if w.Priority != worldmodel.High || w.Source != "mic" || w.Data["name"] != "hey_robot" || w.Data["detector"] != "builtin" || w.Data["stt"] != true {
		t.Fatalf("wake event %+v", w)
	}
	if sc, _ := w.Data["score"].(float64); sc < 0.8 || sc > 1 {
		t.Fatalf("wake score %v", w.Data["score"])
	}
	v := rec.waitFor(t, EventVoiceCommand, 1, 10*time.Second)[0]
	if v.Priority != worldmodel.Normal || v.Data["text"] != "turn on the headlight" || v.Data["wake_word"] != "hey_robot" {
		t.Fatalf("voice command %+v", v)
	}
	// The captured audio is the command plus the end silence, not the
	// whole rest of the recording.
	if a, _ := v.Data["audio_s"].(float64); a < 1.2 || a > 3.0 {
		t.Fatalf("captured %.2f s for a %.2f s command", a, float64(len(cmd))/audio.Rate)
	}
	got := srv.Received()
	if got[0].Type != "transcribe" || got[0].String("language") != "en" {
		t.Fatalf("STT server saw %+v", got[0])
	}
	if len(rec.kinds(EventWakeWord)) != 1 || len(rec.kinds(EventCommandFailed)) != 0 {
		t.Fatalf("events: %d wake, %d failed", len(rec.kinds(EventWakeWord)), len(rec.kinds(EventCommandFailed)))
	}
	// Levels at 10 Hz (the command ended after about 6 s of the 8).
	if o, n := rec.latest("mic.rms_dbfs"); n < 55 || o.Unit != "dBFS" || o.Value > -20 || o.Value < -80 {
		t.Fatalf("rms readings: %d, last %+v", n, o)
	}
	for _, q := range []string{"peak_dbfs", "noise_dbfs", "speech", "dropped"} {
		if _, n := rec.latest("mic." + q); n < 55 {
			t.Errorf("mic.%s: %d readings", q, n)
		}
	}
	if o, _ := rec.latest("mic.health"); o.Text != "ok" {
		t.Errorf("health %q", o.Text)
	}
}

func TestWakeWordWithoutSTTSaysSo(t *testing.T) {
	wav := sceneWAV(t, 6*time.Second, [][]int16{speech(t, "pos/enrolled_b.wav")}, []time.Duration{3 * time.Second})
	s := newSensor(t, fmt.Sprintf("- name: ears\n  kind: mic\n  options: {source: wav, file: %s, pace: false, wakeword: {templates: testdata/wakewords}}", wav))
	rec := newRecorder()
	stop := run(t, s, rec)
	w := rec.waitFor(t, EventWakeWord, 1, 10*time.Second)[0]
	if w.Data["stt"] != false || !strings.Contains(w.Message, "no speech-to-text") || w.Source != "ears" {
		t.Fatalf("wake event without STT: %+v", w)
	}
	time.Sleep(100 * time.Millisecond)
	stop()
	if n := len(rec.kinds(EventVoiceCommand)) + len(rec.kinds(EventCommandFailed)); n != 0 {
		t.Fatalf("%d command events without STT", n)
	}
}

func TestVoiceCommandFailures(t *testing.T) {
	// Wake word, then nothing said: no_speech_timeout, and a dead STT
	// server: both end in voice_command_failed, never in a hang.
	wav := sceneWAV(t, 9*time.Second, [][]int16{speech(t, "pos/enrolled_a.wav")}, []time.Duration{3 * time.Second})
	s := newSensor(t, fmt.Sprintf(`
- name: mic
  kind: mic
  options:
    source: wav
    file: %s
    pace: false
    wakeword: {templates: testdata/wakewords}
    stt: {wyoming: 127.0.0.1:1, no_speech_timeout: 2s}
`, wav))
	rec := newRecorder()
	stop := run(t, s, rec)
	defer stop()
	f := rec.waitFor(t, EventCommandFailed, 1, 10*time.Second)[0]
	if !strings.Contains(f.Message, "unreachable") || f.Priority != worldmodel.Low {
		t.Fatalf("failure %+v", f)
	}

	srv, err := wyomingtest.Start(&wyomingtest.Server{Transcribe: func([]int16) string { return "should not be asked" }})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s = newSensor(t, fmt.Sprintf(`
- name: mic
  kind: mic
  options:
    source: wav
    file: %s
    pace: false
    wakeword: {templates: testdata/wakewords}
    stt: {wyoming: %s, no_speech_timeout: 2s}
`, wav, srv.Addr()))
	rec = newRecorder()
	stop2 := run(t, s, rec)
	defer stop2()
	f = rec.waitFor(t, EventCommandFailed, 1, 10*time.Second)[0]
	if !strings.Contains(f.Message, "no speech") {
		t.Fatalf("failure %+v", f)
	}
}

func TestLoudNoise(t *testing.T) {
	sig := make([]int16, 3*audio.Rate)
	audio.NewNoise("white", -50, 3).Fill(sig)
	for i := audio.Rate; i < audio.Rate+400; i++ { // a bang at 1 s, -0.2 dBFS
		sig[i] = int16(32000 * (1 - 2*float64(i%2)))
	}
	for i := 2 * audio.Rate; i < 2*audio.Rate+400; i++ { // another within the cooldown
		sig[i] = int16(32000 * (1 - 2*float64(i%2)))
	}
	wav := writeWAV(t, "bang.wav", sig)
	s := newSensor(t, fmt.Sprintf("- name: mic\n  kind: mic\n  options: {source: wav, file: %s, pace: false, loud_priority: normal, wakeword: {detector: off}}", wav))
	rec := newRecorder()
	stop := run(t, s, rec)
	e := rec.waitFor(t, EventLoudNoise, 1, 5*time.Second)[0]
	time.Sleep(200 * time.Millisecond)
	stop()
	if e.Priority != worldmodel.Normal || e.Data["peak_dbfs"].(float64) < -1 {
		t.Fatalf("loud noise %+v", e)
	}
	if n := len(rec.kinds(EventLoudNoise)); n != 1 {
		t.Fatalf("%d loud_noise events within the 2 s cooldown", n)
	}
}

func TestSourceFailureReopens(t *testing.T) {
	// A capture command that dies every 0.2 s: the sensor reports the fault,
	// reopens with backoff, and recovers each time.
	s := newSensor(t, fmt.Sprintf(`
- name: mic
  kind: mic
  options:
    source: exec
    command: [%s]
    wakeword: {detector: off}
    reconnect: {initial: 50ms, max: 100ms}
`, strings.Join(helper("short"), ", ")))
	rec := newRecorder()
	stop := run(t, s, rec)
	rec.waitFor(t, sensors.EventRecovered, 2, 10*time.Second)
	stop()
	f := rec.kinds(sensors.EventFault)
	if len(f) < 2 || !strings.Contains(f[0].Message, "ended its output") {
		t.Fatalf("faults %+v", f)
	}
}

func TestWyomingDetectorAndFallback(t *testing.T) {
	// "hey robot" at 3 s (the built-in detector knows it) and a click at
	// 4.5 s (the fake server's wake word).
	click := make([]int16, 800)
	click[400] = 32000
	wav := sceneWAV(t, 5500*time.Millisecond, [][]int16{speech(t, "pos/enrolled_a.wav"), click},
		[]time.Duration{3 * time.Second, 4500 * time.Millisecond})
	srv, err := wyomingtest.Start(&wyomingtest.Server{Split: 9, Wake: func(a []int16) string {
		for _, v := range a[max(0, len(a)-3200):] {
			if v > 30000 {
				return "ok_nabu"
			}
		}
		return ""
	}})
	if err != nil {
		t.Fatal(err)
	}
	block := `
- name: mic
  kind: mic
  options:
    source: wav
    file: %s
    pace: true
    wakeword: {detector: wyoming, wyoming: %s, wyoming_names: [ok_nabu], templates: testdata/wakewords}
    reconnect: {initial: 100ms, max: 200ms}
`
	// The server is up: it decides, and the built-in detector stays quiet.
	rec := newRecorder()
	stop := run(t, newSensor(t, fmt.Sprintf(block, wav, srv.Addr())), rec)
	w := rec.waitFor(t, EventWakeWord, 1, 10*time.Second)[0]
	if w.Data["detector"] != "wyoming" || w.Data["name"] != "ok_nabu" {
		t.Fatalf("wake event %+v (the built-in detector should defer to the server)", w)
	}
	if got := srv.Received(); got[0].Type != "detect" || fmt.Sprint(got[0].Data["names"]) != "[ok_nabu]" {
		t.Fatalf("server saw %+v", got[0])
	}
	// The connection drops: the client reconnects.
	srv.DropConnections()
	deadline := time.Now().Add(5 * time.Second)
	for srv.Connections.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if n := srv.Connections.Load(); n < 2 {
		t.Fatalf("%d connections: no reconnect after the server dropped the stream", n)
	}
	if n := len(rec.kinds(EventWakeWord)); n != 1 {
		t.Fatalf("%d wake events with the server up", n)
	}

	// The server is down: the built-in detector takes over.
	srv.Close()
	rec = newRecorder()
	stop = run(t, newSensor(t, fmt.Sprintf(block, wav, srv.Addr())), rec)
	w = rec.waitFor(t, EventWakeWord, 1, 10*time.Second)[0]
	stop()
	if w.Data["detector"] != "builtin" || w.Data["name"] != "hey_robot" {
		t.Fatalf("fallback wake event %+v", w)
	}
}

func TestWakeWordPriorityFromBoard(t *testing.T) {
	wav := sceneWAV(t, 5*time.Second, [][]int16{speech(t, "pos/enrolled_a.wav")}, []time.Duration{3 * time.Second})
	s := newSensor(t, fmt.Sprintf("- name: mic\n  kind: mic\n  priority: normal\n  options: {source: wav, file: %s, pace: false, wakeword: {templates: testdata/wakewords}}", wav))
	rec := newRecorder()
	stop := run(t, s, rec)
	defer stop()
	if w := rec.waitFor(t, EventWakeWord, 1, 10*time.Second)[0]; w.Priority != worldmodel.Normal {
		t.Fatalf("wake word priority %v, board says normal", w.Priority)
	}
}
