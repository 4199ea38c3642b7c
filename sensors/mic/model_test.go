package mic

import (
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

// With no wakeword section the mic runs the shipped model, and it wakes
// for a voice it was never trained on (en-gb+f2 is held out).
func TestBuiltinModelByDefaultHearsAHeldOutVoice(t *testing.T) {
	wav := sceneWAV(t, 6*time.Second, [][]int16{speech(t, "pos/unseen_gb_f2.wav")}, []time.Duration{3 * time.Second})
	s := newSensor(t, fmt.Sprintf("- name: mic\n  kind: mic\n  options: {source: wav, file: %s, pace: false}", wav))
	if n := s.Nets(); len(n) != 1 || n[0].Name != "hey_robot" || len(s.Models()) != 0 {
		t.Fatalf("nets %v, templates %d", n, len(s.Models()))
	}
	rec := sensortest.NewRecorder()
	stop := sensortest.Run(t, s, rec)
	defer stop()
	w := waitEvents(t, rec, EventWakeWord, 1, 10*time.Second)[0]
	if w.Data["name"] != "hey_robot" || w.Data["by"] != wakeword.DetectorModel || w.Data["detector"] != "builtin" {
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

// A damaged model file stops the sensor at start with a clear error.
func TestCorruptModelFileIsRefusedAtStart(t *testing.T) {
	n, err := wakeword.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "m.eaww")
	if err := wakeword.SaveNet(p, n); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	if err := os.WriteFile(p, b[:len(b)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = newSensorErr(t, fmt.Sprintf("- name: mic\n  kind: mic\n  options: {source: sim, wakeword: {model: %s}}", p))
	if !errors.Is(err, wakeword.ErrBadModel) || !strings.Contains(err.Error(), "wakeword.model") {
		t.Fatalf("err %v", err)
	}
	// Templates with a model are optional: none enrolled is fine.
	if _, err := newSensorErr(t, "- name: mic\n  kind: mic\n  options: {source: sim, wakeword: {model: builtin, templates: /nonexistent}}"); err != nil {
		t.Fatal(err)
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
