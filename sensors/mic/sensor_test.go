package mic

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// waitEvents waits until kind has been raised n times and returns the
// events of that kind.
func waitEvents(t *testing.T, rec *sensortest.Recorder, kind string, n int, d time.Duration) []worldmodel.Event {
	t.Helper()
	rec.WaitFor(t, d, fmt.Sprintf("%d× %s", n, kind), func() bool { return len(rec.Events(kind)) >= n })
	return rec.Events(kind)
}

// latest is the last observation of source and how many there were.
func latest(rec *sensortest.Recorder, source string) (worldmodel.Observation, int) {
	obs := rec.Observations(source)
	if len(obs) == 0 {
		return worldmodel.Observation{}, 0
	}
	return obs[len(obs)-1], len(obs)
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
	s, err := sensors.New(sensortest.Board(t, "sim", block))
	if err != nil {
		t.Fatal(err)
	}
	return s.(*Sensor)
}

// voiceSensor builds the mic "mic" listening to wav for the shipped wake
// word and sending what is said after one to speech-to-text; stt is the
// inside of its options.stt block. pace plays the file in real time.
func voiceSensor(t *testing.T, wav string, pace bool, stt string) *Sensor {
	t.Helper()
	return newSensor(t, fmt.Sprintf(`
- name: mic
  kind: mic
  options:
    source: wav
    file: %s
    pace: %v
    stt: {%s}
`, wav, pace, stt))
}

// startWyoming starts a fake Wyoming server, stopped when the test ends.
func startWyoming(t *testing.T, srv *wyomingtest.Server) *wyomingtest.Server {
	t.Helper()
	srv, err := wyomingtest.Start(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

// hearHeadlight transcribes the spoken command of the tests: "turn on the
// headlight" in any capture of half a second or more.
func hearHeadlight(a []int16) string {
	if len(a) < audio.Rate/2 {
		return ""
	}
	return "turn on the headlight"
}

func TestOptions(t *testing.T) {
	s := newSensor(t, "- name: mic\n  kind: mic\n  options: {source: sim}")
	o := s.Opts()
	if o.LoudDBFS != -3 || o.STT.EndSilence != 800*time.Millisecond || o.WakeWord.Refractory != 1500*time.Millisecond || !o.Pace ||
		o.WakeWord.Model != ModelBuiltin {
		t.Fatalf("defaults not applied: %+v", o)
	}
	for _, tc := range []struct{ block, want string }{
		{"options: {source: tape}", "options.source: want malgo"},
		{"options: {source: exec}", "options.command: source exec needs one"},
		{"options: {source: exec, command: [arecord], format: {encoding: s12}}", "encoding"},
		{"options: {source: wav}", "options.file: source wav needs one"},
		{"options: {source: sim, sim: {noise: brown}}", "sim.noise"},
		{"options: {source: sim, wakeword: {detector: wyoming}}", "options.wakeword.wyoming: wakeword.detector wyoming needs it"},
		{"options: {source: sim, wakeword: {model_threshold: 1.2}}", "options.wakeword.model_threshold: want 0..1"},
		{"options: {source: sim, loud_priority: urgent}", "loud_priority"},
		// Enrolment was removed: a board that still names its keys is told.
		{"options: {source: sim, wakeword: {templates: wakewords}}", "options.wakeword.templates: enrolled templates were removed"},
		{"options: {source: sim, wakeword: {names: [hey_robot]}}", "options.wakeword.names: enrolled templates were removed"},
		{"options: {source: sim, wakeword: {threshold: 0.8}}", "options.wakeword.threshold: enrolled templates were removed"},
		{"options: {source: sim, wakword: {}}", "unknown"},
	} {
		cfg, err := sensortest.ParseBoard("sim", "- name: mic\n  kind: mic\n  "+tc.block)
		if err == nil {
			_, err = sensors.New(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.block, err, tc.want)
		}
	}
	// The wyoming detector keeps the shipped head as its fallback.
	if s := newSensor(t, "- name: mic\n  kind: mic\n  options: {source: sim, wakeword: {detector: wyoming, wyoming: 127.0.0.1:10400}}"); len(s.Heads()) != 1 {
		t.Fatalf("wyoming without a fallback head: %d", len(s.Heads()))
	}
}

func TestWakeWordThenVoiceCommand(t *testing.T) {
	srv := startWyoming(t, &wyomingtest.Server{Split: 11, Transcribe: hearHeadlight})
	cmd := speech(t, "neg/turn_on_the_headlight.wav")
	wav := sceneWAV(t, 8*time.Second, [][]int16{speech(t, "pos/enrolled_a.wav"), cmd},
		[]time.Duration{3 * time.Second, 4 * time.Second})
	s := voiceSensor(t, wav, false, "wyoming: "+srv.Addr()+", language: en")
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	defer stop()

	w := waitEvents(t, rec, EventWakeWord, 1, 10*time.Second)[0]
	if w.Priority != worldmodel.High || w.Source != "mic" || w.Data["name"] != "hey_robot" || w.Data["detector"] != "builtin" || w.Data["stt"] != true {
		t.Fatalf("wake event %+v", w)
	}
	if sc, _ := w.Data["score"].(float64); sc < 0.8 || sc > 1 {
		t.Fatalf("wake score %v", w.Data["score"])
	}
	v := waitEvents(t, rec, EventVoiceCommand, 1, 10*time.Second)[0]
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
	if len(rec.Events(EventWakeWord)) != 1 || len(rec.Events(EventCommandFailed)) != 0 {
		t.Fatalf("events: %d wake, %d failed", len(rec.Events(EventWakeWord)), len(rec.Events(EventCommandFailed)))
	}
	// Levels at 10 Hz (the command ended after about 6 s of the 8).
	if o, n := latest(rec, "mic.rms_dbfs"); n < 55 || o.Unit != "dBFS" || o.Value > -20 || o.Value < -80 {
		t.Fatalf("rms readings: %d, last %+v", n, o)
	}
	for _, q := range []string{"peak_dbfs", "noise_dbfs", "speech", "dropped"} {
		if _, n := latest(rec, "mic."+q); n < 55 {
			t.Errorf("mic.%s: %d readings", q, n)
		}
	}
	if o, _ := latest(rec, "mic.health"); o.Text != "ok" {
		t.Errorf("health %q", o.Text)
	}
}

func TestWakeWordWithoutSTTSaysSo(t *testing.T) {
	wav := sceneWAV(t, 6*time.Second, [][]int16{speech(t, "pos/enrolled_b.wav")}, []time.Duration{3 * time.Second})
	s := newSensor(t, fmt.Sprintf("- name: ears\n  kind: mic\n  options: {source: wav, file: %s, pace: false}", wav))
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	w := waitEvents(t, rec, EventWakeWord, 1, 10*time.Second)[0]
	if w.Data["stt"] != false || !strings.Contains(w.Message, "no speech-to-text") || w.Source != "ears" {
		t.Fatalf("wake event without STT: %+v", w)
	}
	time.Sleep(100 * time.Millisecond)
	stop()
	if n := len(rec.Events(EventVoiceCommand)) + len(rec.Events(EventCommandFailed)); n != 0 {
		t.Fatalf("%d command events without STT", n)
	}
}

func TestVoiceCommandFailures(t *testing.T) {
	// Wake word, then nothing said: no_speech_timeout, and a dead STT
	// server: both end in voice_command_failed, never in a hang.
	wav := sceneWAV(t, 9*time.Second, [][]int16{speech(t, "pos/enrolled_a.wav")}, []time.Duration{3 * time.Second})
	s := voiceSensor(t, wav, false, "wyoming: 127.0.0.1:1, no_speech_timeout: 2s")
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	defer stop()
	f := waitEvents(t, rec, EventCommandFailed, 1, 10*time.Second)[0]
	if !strings.Contains(f.Message, "unreachable") || f.Priority != worldmodel.Low {
		t.Fatalf("failure %+v", f)
	}

	srv := startWyoming(t, &wyomingtest.Server{Transcribe: func([]int16) string { return "should not be asked" }})
	s = voiceSensor(t, wav, false, "wyoming: "+srv.Addr()+", no_speech_timeout: 2s")
	rec = sensortest.NewRecorder()
	stop2 := sensortest.Run(t, s, rec)
	defer stop2()
	f = waitEvents(t, rec, EventCommandFailed, 1, 10*time.Second)[0]
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
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	e := waitEvents(t, rec, EventLoudNoise, 1, 5*time.Second)[0]
	time.Sleep(200 * time.Millisecond)
	stop()
	if e.Priority != worldmodel.Normal || e.Data["peak_dbfs"].(float64) < -1 {
		t.Fatalf("loud noise %+v", e)
	}
	if n := len(rec.Events(EventLoudNoise)); n != 1 {
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
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	waitEvents(t, rec, sensors.EventRecovered, 2, 10*time.Second)
	stop()
	f := rec.Events(sensors.EventFault)
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
	srv := startWyoming(t, &wyomingtest.Server{Split: 9, Wake: func(a []int16) string {
		for _, v := range a[max(0, len(a)-3200):] {
			if v > 30000 {
				return "ok_nabu"
			}
		}
		return ""
	}})
	block := `
- name: mic
  kind: mic
  options:
    source: wav
    file: %s
    pace: true
    wakeword: {detector: wyoming, wyoming: %s, wyoming_names: [ok_nabu]}
    reconnect: {initial: 100ms, max: 200ms}
`
	// The server is up: it decides, and the built-in detector stays quiet.
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, newSensor(t, fmt.Sprintf(block, wav, srv.Addr())), rec)
	w := waitEvents(t, rec, EventWakeWord, 1, 10*time.Second)[0]
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
	if n := len(rec.Events(EventWakeWord)); n != 1 {
		t.Fatalf("%d wake events with the server up", n)
	}

	// The server is down: the built-in detector takes over.
	srv.Close()
	rec = sensortest.NewRecorder()
	stop = sensortest.Run(t, newSensor(t, fmt.Sprintf(block, wav, srv.Addr())), rec)
	w = waitEvents(t, rec, EventWakeWord, 1, 10*time.Second)[0]
	stop()
	if w.Data["detector"] != "builtin" || w.Data["name"] != "hey_robot" {
		t.Fatalf("fallback wake event %+v", w)
	}
}

func TestWakeWordPriorityFromBoard(t *testing.T) {
	wav := sceneWAV(t, 5*time.Second, [][]int16{speech(t, "pos/enrolled_a.wav")}, []time.Duration{3 * time.Second})
	s := newSensor(t, fmt.Sprintf("- name: mic\n  kind: mic\n  priority: normal\n  options: {source: wav, file: %s, pace: false}", wav))
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	defer stop()
	if w := waitEvents(t, rec, EventWakeWord, 1, 10*time.Second)[0]; w.Priority != worldmodel.Normal {
		t.Fatalf("wake word priority %v, board says normal", w.Priority)
	}
}
