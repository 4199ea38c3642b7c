package mic

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// With no wakeword section the mic runs the shipped head, and it wakes
// for a voice it was never trained on (flite's awb: training hears
// espeak-ng alone).
func TestBuiltinModelByDefaultHearsAHeldOutVoice(t *testing.T) {
	wav := sceneWAV(t, 6*time.Second, [][]int16{speech(t, "pos/flite_awb.wav")}, []time.Duration{3 * time.Second})
	s := newSensor(t, fmt.Sprintf("- name: mic\n  kind: mic\n  options: {source: wav, file: %s, pace: false}", wav))
	if h := s.Heads(); len(h) != 1 || h[0].Info.Name != "hey_robot" {
		t.Fatalf("heads %v", h)
	}
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	defer stop()
	w := waitEvents(t, rec, EventWakeWord, 1, 10*time.Second)[0]
	if w.Data["name"] != "hey_robot" || w.Data["detector"] != "builtin" {
		t.Fatalf("wake event %+v", w.Data)
	}
}

// Other speech does not wake the shipped model.
func TestBuiltinModelIgnoresOtherSpeech(t *testing.T) {
	var clips [][]int16
	var at []time.Duration
	for i, f := range []string{"neg/hey_robin.wav", "neg/hello_there.wav", "neg/turn_on_the_headlight.wav", "neg/open_the_garage_door.wav"} {
		clips = append(clips, speech(t, f))
		at = append(at, time.Duration(1+2*i)*time.Second)
	}
	wav := sceneWAV(t, 10*time.Second, clips, at)
	s := newSensor(t, fmt.Sprintf("- name: mic\n  kind: mic\n  options: {source: wav, file: %s, pace: false}", wav))
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	// The file is read as fast as possible; wait until its last level
	// reading (one per 100 ms).
	rec.WaitFor(t, 10*time.Second, "99 level readings", func() bool { return len(rec.Observations("mic.speech")) >= 99 })
	stop()
	if w := rec.Events(EventWakeWord); len(w) != 0 {
		t.Fatalf("woke on other speech: %+v", w[0].Data)
	}
}

// A damaged head file, or one trained over another frontend, stops the
// sensor at start with a clear error.
func TestCorruptModelFileIsRefusedAtStart(t *testing.T) {
	h, err := wakeword.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, h *wakeword.Head, cut int) string {
		var b bytes.Buffer
		if err := wakeword.WriteHead(&b, h); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b.Bytes()[:b.Len()-cut], 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	other, err := wakeword.NewHead(wakeword.HeadInfo{Name: "x", Frontend: "another", Threshold: 0.5}, h.Layers())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{write("cut.eawh", h, 100), write("other.eawh", other, 0)} {
		_, err = newSensorErr(t, fmt.Sprintf("- name: mic\n  kind: mic\n  options: {source: sim, wakeword: {model: %s}}", p))
		if !errors.Is(err, wakeword.ErrBadModel) || !strings.Contains(err.Error(), "wakeword.model") {
			t.Fatalf("%s: err %v", p, err)
		}
	}
}

func newSensorErr(t *testing.T, block string) (sensors.Sensor, error) {
	t.Helper()
	cfg, err := sensortest.ParseBoard("sim", block)
	if err != nil {
		t.Fatal(err)
	}
	return sensors.New(cfg)
}
