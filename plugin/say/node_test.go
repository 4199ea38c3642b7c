package say_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/nodetest"
	_ "github.com/edgeagent/edgeagent/plugin/actuators"
	_ "github.com/edgeagent/edgeagent/plugin/engine"
	"github.com/edgeagent/edgeagent/plugin/say"
	_ "github.com/edgeagent/edgeagent/sensors/mic"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
	"github.com/edgeagent/edgeagent/tools"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/motor"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/pwm"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/servo"
	_ "github.com/edgeagent/edgeagent/tools/actuator/kinds/switches"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The whole voice path on the sim board: the sim microphone (real VAD and
// wake-word detector) hears the sim speaker, which plays what the real
// espeak-ng engine says.

func testdata(t testing.TB, p string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("../../sensors/mic/testdata", p))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// rig is a running sim node with a mic named after the test (so that the
// duplex lines of parallel tests never meet).
type rig struct {
	n   *node.Node
	say *say.Plugin
	mic string
}

func start(t testing.TB, micOpts, sayOpts string) *rig {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (apt-get install espeak-ng)")
	}
	mic := "mic_" + strings.ToLower(strings.NewReplacer("/", "_", "-", "_").Replace(t.Name()))
	n := nodetest.New(t, fmt.Sprintf(`plugins: {mqtt: {enabled: false}, say: {%s}}
llm: {enabled: false}
sensors:
  - name: %s
    kind: mic
    options:
      source: sim
      %s
actuators:
  - {name: headlight, kind: led, pins: {pin: "sim:12"}, initial: "off"}
`, sayOpts, mic, micOpts))
	p, ok := node.Find[*say.Plugin](n)
	if !ok || p.Sim() == nil {
		t.Fatal("say plugin not loaded with the sim sink")
	}
	nodetest.Run(t, n)
	r := &rig{n: n, say: p, mic: mic}
	// 2.5 s of audio first, however late the microphone started on a busy
	// machine: the VAD learns the room's noise before anyone speaks, and
	// the wake-word head's window and its frontend's context (2 s) hold
	// the room, not the silence before the microphone opened.
	waitFor(t, 30*time.Second, "the microphone", func() bool { return len(n.World.Since(mic+".rms_dbfs", 0, 0)) >= 25 })
	return r
}

func (r *rig) events(kind string) []worldmodel.Event {
	var out []worldmodel.Event
	for _, e := range r.n.World.Events(0, worldmodel.Low, 0) {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func (r *rig) speak(t testing.TB, params string) tools.Result {
	t.Helper()
	res, err := r.n.Tools.Invoke(context.Background(), tools.Call{Caller: "cli", Tool: "speaker.say", Params: json.RawMessage(params)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// heardAll waits until the sim microphone has heard the n samples the sim
// speaker played and processed another second of audio (the detector
// decides after the phrase has ended), however late it runs.
func (r *rig) heardAll(t testing.TB, n int) {
	t.Helper()
	line := duplex.Get(r.mic)
	waitFor(t, 20*time.Second, "the mic to hear the speaker", func() bool { return line.Heard() >= int64(n) })
	last, _ := r.n.World.Latest(r.mic + ".rms_dbfs")
	waitFor(t, 20*time.Second, "another second of audio", func() bool { return len(r.n.World.Since(r.mic+".rms_dbfs", last.Seq, 0)) >= 10 })
}

func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// The robot says its own wake word (espeak-ng's en-us+m3, which the
// shipped head hears): with half-duplex off it wakes itself (so the test
// can fail), with mute it does not.
func TestHalfDuplex(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mode  string
		wakes bool
	}{{"off", true}, {"mute", false}} {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			r := start(t, "half_duplex: {mode: "+c.mode+", tail: 300ms}", "voice: en-us+m3")
			res := r.speak(t, `{"text": "hey robot"}`)
			if v := res.Value.(map[string]any); v["seconds"].(float64) < 0.5 {
				t.Fatalf("said %v", v)
			}
			// Waking itself, the robot may also barge in on itself (when
			// the detection comes before the last samples played).
			said := r.say.Sim().Said()
			if len(said) != 1 || said[0].Text != "hey robot" || (said[0].Stopped && !c.wakes) {
				t.Fatalf("sim speaker: %+v", said)
			}
			r.heardAll(t, said[0].Samples)
			woke := len(r.events("wake_word")) > 0
			if woke != c.wakes {
				// A paced sim microphone drops audio it cannot process in
				// time (a loaded machine under -race): say how much.
				dropped, _ := r.n.World.Latest(r.mic + ".dropped")
				t.Fatalf("mode %s: woke itself %v, want %v (events %v; the microphone dropped %v samples)",
					c.mode, woke, c.wakes, r.events("wake_word"), dropped.Value)
			}
		})
	}
}

// Barge-in: an e-stop and a wake word each cut the robot off at once.
func TestBargeIn(t *testing.T) {
	t.Parallel()
	r := start(t, "half_duplex: {mode: raise, threshold: 0.9}", "voice: en-gb+f2")
	long := `{"text": "this is a test of the speaker, and it goes on for quite a while, long enough to be interrupted"}`
	for _, c := range []struct {
		why   string
		event worldmodel.Event
	}{
		{"estop", worldmodel.Event{Kind: "estop", Source: "panel", Priority: worldmodel.Critical}},
		{"wake word", worldmodel.Event{Kind: "wake_word", Source: r.mic, Priority: worldmodel.High}},
	} {
		done := make(chan tools.Result, 1)
		go func() { done <- r.speak(t, long) }()
		waitFor(t, 5*time.Second, "speech", func() bool { return r.say.Speaker().Speaking() })
		time.Sleep(300 * time.Millisecond)
		r.n.Raise(c.event)
		select {
		case res := <-done:
			v := res.Value.(map[string]any)
			if s := fmt.Sprint(v["interrupted"]); !strings.Contains(s, c.why) || v["seconds"].(float64) > 2 {
				t.Fatalf("%s: %v", c.why, v)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s did not stop the speech", c.why)
		}
		if c.why == "estop" {
			r.n.Raise(worldmodel.Event{Kind: "estop_reset", Source: "panel", Priority: worldmodel.Normal})
		}
	}
}

// A voice command gets a spoken answer: wake word, command, transcript
// (a fake Whisper), the local matcher, the headlight, then "OK, headlight
// set on." from the sim speaker.
func TestSpokenReply(t *testing.T) {
	t.Parallel()
	stt, err := wyomingtest.Start(&wyomingtest.Server{Transcribe: func([]int16) string { return "turn on the headlight" }})
	if err != nil {
		t.Fatal(err)
	}
	defer stt.Close()
	r := start(t, fmt.Sprintf(`sim: {noise: pink, noise_dbfs: -60, period: 60s, utterances: [{file: %s, at: 2500ms}, {file: %s, at: 3500ms}]}
      stt: {wyoming: %s}`, testdata(t, "speech/pos/enrolled_a.wav"), testdata(t, "speech/neg/turn_on_the_headlight.wav"), stt.Addr()), "")
	waitFor(t, 60*time.Second, "the spoken reply", func() bool { return len(r.say.Sim().Said()) == 1 && !r.say.Speaker().Speaking() })
	said := r.say.Sim().Said()[0]
	if said.Text != "OK, headlight set on." || said.Samples < 8000 {
		t.Fatalf("said %+v", said)
	}
	if st := r.n.World.Actuators()["headlight"]; !strings.Contains(st, "on") {
		t.Fatalf("headlight %q", st)
	}
	vc := r.events("voice_command")
	if len(vc) != 1 {
		t.Fatalf("voice commands %v", vc)
	}
	wake := r.events("wake_word")
	t.Logf("voice_command → first audio of the reply: %v; wake word → first audio: %v (the command is spoken and its end waited for in between)",
		said.FirstAudio.Sub(vc[0].Time), said.FirstAudio.Sub(wake[0].Time))
}

// Barge-in by voice, all real: the robot talks (another voice than the
// speaker's) and someone says the wake word over it. With half-duplex
// raise, the detector still hears a clear wake word and the speech stops.
// There is no echo cancellation: the shipped head finds the wake word
// while the robot's voice reaches the microphone well below the speaker's
// (volume 0.05 here, 26 dB down; it still does at 0.2, 14 dB, and misses it
// at 0.4, 8 dB) — a person close to a quiet robot, not one shouting over a
// loud one.
func TestBargeInByVoice(t *testing.T) {
	t.Parallel()
	r := start(t, fmt.Sprintf("sim: {noise: pink, noise_dbfs: -60, period: 0s, utterances: [{file: %s, at: 2500ms}]}\n      half_duplex: {mode: raise, threshold: 0.85}",
		testdata(t, "speech/pos/enrolled_a.wav")), "voice: en-gb+f2, volume: 0.05")
	res := r.speak(t, `{"text": "this is a test of the speaker, and it goes on for quite a while, long enough to be interrupted by somebody"}`)
	v := res.Value.(map[string]any)
	if s := fmt.Sprint(v["interrupted"]); !strings.Contains(s, "wake word") {
		t.Fatalf("not interrupted by the wake word: %v (wake words %v)", v, r.events("wake_word"))
	}
	if len(r.events("wake_word")) != 1 {
		t.Fatalf("wake words %v", r.events("wake_word"))
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	for opts, want := range map[string]string{
		"engine: festival": "plugins.say.engine",
		"engine: wyoming":  "plugins.say.wyoming",
		"volume: 2":        "plugins.say.volume",
		"sink: bluetooth":  "plugins.say.sink",
		"mic: kitchen":     "plugins.say.mic: names no enabled mic sensor",
		"command: []":      "plugins.say.command",
		"raw_rate: 100":    "plugins.say.raw_rate",
		"max_text: 0":      "plugins.say.max_text",
		"voice_volume: 1":  "voice_volume",
	} {
		nodetest.Refused(t, "plugins: {mqtt: {enabled: false}, say: {"+opts+"}}\nllm: {enabled: false}\n", want)
	}
}

// A command the robot cannot carry out gets a spoken refusal that says
// why; a command over MQTT (not a voice command) gets no spoken answer
// unless it asks for one.
func TestSpokenRefusalAndSilentText(t *testing.T) {
	t.Parallel()
	r := start(t, "", "")
	r.n.Raise(worldmodel.Event{Time: time.Now(), Kind: "voice_command", Source: r.mic, Priority: worldmodel.Normal,
		Data: map[string]any{"text": "open the garage door"}})
	waitFor(t, 30*time.Second, "the refusal", func() bool { return len(r.say.Sim().Said()) == 1 })
	said := r.say.Sim().Said()[0].Text
	if !strings.HasPrefix(said, "Sorry") || len(said) < 20 {
		t.Fatalf("said %q", said)
	}
	t.Logf("refusal: %q", said)
	// As the MQTT control plane submits a text command.
	if _, err := r.n.Agent.Submit(context.Background(), agent.Command{ID: "m1", Caller: "mqtt", Text: "turn on the headlight"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // a reply would have started by now (it takes ≤ 65 ms)
	if n := len(r.say.Sim().Said()); n != 1 {
		t.Fatalf("a text command was answered out loud: %+v", r.say.Sim().Said())
	}
	// Unless it asks to be ("speak": true over MQTT).
	if _, err := r.n.Agent.Submit(context.Background(), agent.Command{ID: "m2", Caller: "mqtt", Text: "turn on the headlight", Speak: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the spoken answer to a text command", func() bool { return len(r.say.Sim().Said()) == 2 })
	if said := r.say.Sim().Said()[1].Text; !strings.Contains(said, "headlight") {
		t.Fatalf("said %q", said)
	}
}

// The Wyoming engine from the board: the skill's text and voice reach the
// TTS server (a fake wyoming-piper) and its 22050 Hz audio plays at 16 kHz.
func TestWyomingEngineFromBoard(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv, err := wyomingtest.Start(&wyomingtest.Server{TTSRate: 22050, Speak: func(text, voice string) []int16 {
		mu.Lock()
		got = append(got, text+"|"+voice)
		mu.Unlock()
		return make([]int16, 22050/2) // half a second
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	r := start(t, "", "engine: wyoming, wyoming: "+srv.Addr()+", voice: en_US-lessac-medium")
	r.speak(t, `{"text": "hello there", "volume": 0.5}`)
	said := r.say.Sim().Said()
	if len(said) != 1 || said[0].Samples < 7900 || said[0].Samples > 8100 {
		t.Fatalf("sim speaker: %+v", said)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 || got[0] != "hello there|en_US-lessac-medium" {
		t.Fatalf("TTS server got %q", got)
	}
}
