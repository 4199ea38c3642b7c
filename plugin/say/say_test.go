package say

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
)

var quiet = slog.New(slog.DiscardHandler)

func needEspeak(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (apt-get install espeak-ng)")
	}
}

func collect(t *testing.T, e Engine, text, voice string) []int16 {
	t.Helper()
	var got []int16
	if err := e.Speak(context.Background(), text, voice, func(p []int16) error { got = append(got, p...); return nil }); err != nil {
		t.Fatal(err)
	}
	return got
}

func TestEspeakEngine(t *testing.T) {
	t.Parallel()
	needEspeak(t)
	e := &ExecEngine{Command: []string{"espeak-ng", "--stdout"}, VoiceFlag: "-v"}
	short := collect(t, e, "hi", "")
	long := collect(t, e, "turning on the headlight", "en-us+m3")
	// espeak-ng speaks at about 175 words a minute: a few words are a
	// second or two, one word well under one.
	if s := float64(len(long)) / 16000; s < 0.8 || s > 4 || len(short) >= len(long) || len(short) == 0 {
		t.Fatalf("%d and %d samples", len(short), len(long))
	}
	// Text goes on stdin: a leading dash is spoken, not taken as a flag.
	if dash := collect(t, e, "--help me", ""); len(dash) < 8000 {
		t.Fatalf("%q: %d samples", "--help me", len(dash))
	}
	// A voice that does not exist: the error carries espeak-ng's words.
	err := e.Speak(context.Background(), "hi", "xx-nonexistent", func([]int16) error { return nil })
	if err == nil {
		t.Fatal("unknown voice accepted")
	}
}

func TestExecEngineFailures(t *testing.T) {
	t.Parallel()
	none := &ExecEngine{Command: []string{"/nonexistent/tts"}}
	if err := none.Speak(context.Background(), "hi", "", func([]int16) error { return nil }); err == nil {
		t.Error("missing command: no error")
	}
	notWAV := &ExecEngine{Command: []string{"echo", "not a wav file at all, sorry"}}
	if err := notWAV.Speak(context.Background(), "hi", "", func([]int16) error { return nil }); err == nil || !strings.Contains(err.Error(), "wav") {
		t.Errorf("garbage output: %v", err)
	}
	// Raw output at 22050 Hz (piper --output_raw) is resampled to 16 kHz.
	raw := &ExecEngine{Command: []string{"head", "-c", "44100", "/dev/zero"}, RawRate: 22050}
	if got := collect(t, raw, "x", ""); len(got) < 15900 || len(got) > 16100 {
		t.Errorf("1 s of raw 22050 Hz gave %d samples at 16 kHz", len(got))
	}
	// The player stopping (barge-in) kills the synthesiser.
	stop := errors.New("stop")
	endless := &ExecEngine{Command: []string{"cat", "/dev/zero"}, RawRate: 16000}
	start := time.Now()
	if err := endless.Speak(context.Background(), "x", "", func([]int16) error { return stop }); err != stop {
		t.Errorf("player error: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Error("the synthesiser was not stopped")
	}
}

func TestWyomingEngine(t *testing.T) {
	t.Parallel()
	var voices []string
	var mu sync.Mutex
	srv, err := wyomingtest.Start(&wyomingtest.Server{TTSRate: 22050, Speak: func(text, voice string) []int16 {
		mu.Lock()
		voices = append(voices, voice)
		mu.Unlock()
		return make([]int16, 22050) // one second
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	got := collect(t, &WyomingEngine{Addr: srv.Addr()}, "hello", "en_US-lessac-medium")
	if len(got) < 15900 || len(got) > 16100 || voices[0] != "en_US-lessac-medium" {
		t.Fatalf("%d samples, voice %q", len(got), voices)
	}
}

func TestExecSink(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "played.raw")
	s := &ExecSink{Command: []string{"sh", "-c", "cat > " + out}}
	p, err := s.Start(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write([]int16{1, -2, 300}); err != nil {
		t.Fatal(err)
	}
	if err := p.Finish(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	b, _ := os.ReadFile(out)
	if len(b) != 6 || int16(binary.LittleEndian.Uint16(b[2:])) != -2 {
		t.Fatalf("played % x", b)
	}
	failing := &ExecSink{Command: []string{"sh", "-c", "echo no sound card >&2; exit 3"}}
	p, err = failing.Start(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	p.Write(make([]int16, 10))
	if err := p.Finish(); err == nil || !strings.Contains(err.Error(), "no sound card") {
		t.Errorf("failing player: %v", err)
	}
	p.Close()
}

// tone is an engine of our own making for the speaker's logic: a text is
// len(text)×100 ms of a constant sample, written in 10 ms pieces.
type tone struct{}

func (tone) String() string { return "tone" }
func (tone) Speak(ctx context.Context, text, _ string, out func([]int16) error) error {
	for range 10 * len(text) {
		if err := out(constant(160, 1000)); err != nil {
			return err
		}
	}
	return nil
}

func constant(n int, v int16) []int16 {
	s := make([]int16, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestSpeaker(t *testing.T) {
	t.Parallel()
	line := duplex.Get(t.Name())
	sim := &SimSink{Clock: clock.Real(), Air: line}
	sp := &Speaker{Engine: tone{}, Sink: sim, Line: line, Clock: clock.Real(), Log: quiet}
	rep, err := sp.Say(context.Background(), "ab", "", 0.5)
	if err != nil || rep.Samples != 3200 || rep.Duration < 190*time.Millisecond {
		t.Fatalf("%+v %v", rep, err)
	}
	if !line.Speaking(time.Now(), time.Second) || line.Speaking(time.Now().Add(2*time.Second), time.Second) {
		t.Error("the line's tail is not a second after the end")
	}
	buf := make([]int16, 4)
	if err := line.Hear(clock.Real(), time.Time{}, buf, nil); err != nil {
		t.Fatal(err)
	}
	if buf[0] != 500 {
		t.Errorf("volume 0.5 of 1000 is %d on the air", buf[0])
	}
	// A newer utterance cuts off the one playing; Stop cuts off the rest.
	first := make(chan error, 1)
	go func() { _, err := sp.Say(context.Background(), strings.Repeat("x", 50), "", 1); first <- err }()
	waitFor(t, func() bool { return sp.Speaking() })
	second := make(chan error, 1)
	go func() { _, err := sp.Say(context.Background(), strings.Repeat("y", 50), "", 1); second <- err }()
	if err := <-first; !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("first: %v", err)
	}
	waitFor(t, func() bool { return len(sim.Said()) == 3 })
	if !sp.Stop("e-stop") {
		t.Fatal("Stop found nothing playing")
	}
	if err := <-second; !errors.Is(err, ErrInterrupted) || !strings.Contains(err.Error(), "e-stop") {
		t.Fatalf("second: %v", err)
	}
	said := sim.Said()
	if !said[1].Stopped || !said[2].Stopped || said[0].Stopped || said[2].Samples >= 50*1600 {
		t.Fatalf("said %+v", said)
	}
	if sp.Stop("again") {
		t.Error("Stop with nothing playing")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
	}
}

func TestReply(t *testing.T) {
	t.Parallel()
	res := func(tool, params, result string, err error) hooks.ActionResult {
		return hooks.ActionResult{Action: hooks.Action{Tool: tool, Params: json.RawMessage(params)}, Result: json.RawMessage(result), Err: err}
	}
	for _, c := range []struct {
		results []hooks.ActionResult
		err     error
		want    string
	}{
		{[]hooks.ActionResult{res("headlight.set", `{"on":true}`, `{"value":{"on":true}}`, nil)}, nil, "OK, headlight set on."},
		{[]hooks.ActionResult{res("headlight.set", `{"on":false}`, `{}`, nil)}, nil, "OK, headlight set off."},
		{[]hooks.ActionResult{res("pan.set", `{"angle":200}`, `{"notes":["angle clamped from 200 to 180"]}`, nil)}, nil, "OK, pan set angle 200, angle clamped from 200 to 180."},
		{[]hooks.ActionResult{res("world.query", `{"source":"env.temperature","latest":true}`,
			`{"value":[{"source":"env.temperature","kind":"reading","value":22.4,"unit":"°C"}]}`, nil)}, nil, "env temperature is 22.4 degrees."},
		{[]hooks.ActionResult{res("camera.describe", `{}`, `{"value":{"answer":"A person is at the door."}}`, nil)}, nil, "A person is at the door."},
		{[]hooks.ActionResult{res("drive.move", `{"speed":1}`, ``, errors.New(`tool drive.move: refused: the e-stop is latched. Reset it first`))}, nil, "drive move failed: the e-stop is latched."},
		{nil, errors.New("plan: refused: no tool can open the garage door (best match 0.21)"), "Sorry, I can't: no tool can open the garage door."},
		{nil, nil, "Sorry, I don't know how to do that."},
		{[]hooks.ActionResult{res(toolName, `{"text":"hello"}`, `{}`, nil)}, nil, ""},
	} {
		if got := reply(c.results, c.err); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	if got := reply([]hooks.ActionResult{res("x.y", `{}`, `{"value":"`+strings.Repeat("word ", 100)+`"}`, nil)}, nil); len(got) > maxReply+1 {
		t.Errorf("%d characters", len(got))
	}
}

func TestMissingProgramDeclines(t *testing.T) {
	t.Parallel()
	if got := missingProgram(&ExecEngine{Command: []string{"/nonexistent/espeak-ng"}}, &SimSink{}); !strings.Contains(got, "apt-get install espeak-ng") {
		t.Errorf("engine: %q", got)
	}
	if got := missingProgram(&WyomingEngine{}, &ExecSink{Command: []string{"/nonexistent/aplay"}}); !strings.Contains(got, "alsa-utils") {
		t.Errorf("sink: %q", got)
	}
	if got := missingProgram(&WyomingEngine{}, &ExecSink{Command: []string{"sh"}}); got != "" {
		t.Errorf("present: %q", got)
	}
}
