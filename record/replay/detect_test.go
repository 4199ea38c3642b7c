package replay_test

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/record/replay"
	"github.com/edgeagent/edgeagent/sensors/mic/wakeword"
	"github.com/edgeagent/edgeagent/worldmodel"

	_ "github.com/edgeagent/edgeagent/sensors/camera" // the kinds whose detectors a replay runs again
	_ "github.com/edgeagent/edgeagent/sensors/mic"
)

// detect replays a scenario with its frames and audio run through the
// detectors of its recorded board, edited by edit (nil: as recorded).
func detect(t *testing.T, scenario string, edit func(string) string) (*replay.Report, error) {
	t.Helper()
	f := filepath.Join(scenarios, scenario)
	o := replay.Options{Detections: "detectors"}
	if edit != nil {
		in, err := recording.Read(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		y := string(in.Attachments["board.yaml"])
		changed := edit(y)
		if changed == y {
			t.Fatal("the edit changed nothing in the recorded board")
		}
		o.Dir = t.TempDir()
		if o.Board, err = board.Parse(filepath.Join(o.Dir, "b.yaml"), []byte(changed)); err != nil {
			t.Fatal(err)
		}
	}
	return replay.Run(context.Background(), f, o)
}

func report(rep *replay.Report) string {
	var b bytes.Buffer
	rep.Print(&b)
	return b.String()
}

// The motion detector over the recorded frames, and the wake-word model
// over the recorded audio, find what they found live, and the agent does
// what it did: 10 times out of 10.
func TestDetectorsReplayIdentically(t *testing.T) {
	for _, c := range []struct {
		scenario, sensor, kind string
		inputs                 int // at least
	}{
		{"motion-detect.mcap", "cam", "motion_start", 40},
		{"wake-command.mcap", "mic", "wake_word", 5},
	} {
		t.Run(strings.TrimSuffix(c.scenario, ".mcap"), func(t *testing.T) {
			for i := range 10 {
				rep, err := detect(t, c.scenario, nil)
				if err != nil {
					t.Fatal(err)
				}
				if rep.Diverged() {
					t.Fatalf("run %d of 10 diverged:\n%s", i+1, report(rep))
				}
				if len(rep.Detectors) != 1 {
					t.Fatalf("detectors %+v, want the %s's", rep.Detectors, c.sensor)
				}
				d := rep.Detectors[0]
				if d.Sensor != c.sensor || d.Fed < c.inputs || d.Bad != 0 || len(d.Replayed) == 0 || len(d.Replayed) != len(d.Recorded) {
					t.Fatalf("run %d: %+v", i+1, d)
				}
				if d.Replayed[0].Kind != c.kind {
					t.Fatalf("first detection %+v, want %s", d.Replayed[0], c.kind)
				}
			}
		})
	}
}

// A higher motion threshold sees the walker later and loses it sooner: the
// report says which motion events moved, with their times, and the replay
// counts as diverged (--check fails).
func TestDetectorsReplayMotionThresholdDiverges(t *testing.T) {
	rep, err := detect(t, "motion-detect.mcap", func(y string) string {
		return strings.Replace(y, "threshold: 30", "threshold: 250", 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	out := report(rep)
	if !rep.Diverged() || len(rep.Detectors) != 1 {
		t.Fatalf("want a detection divergence:\n%s", out)
	}
	d := rep.Detectors[0]
	if len(d.Missing) == 0 || len(d.New) == 0 || d.Missing[0].Kind != "motion_start" || !d.New[0].Time.After(d.Missing[0].Time) {
		t.Fatalf("missing %+v, new %+v: want the motion start later\n%s", d.Missing, d.New, out)
	}
	at := "motion_start at +" + d.Missing[0].Time.Sub(rep.Start).Round(time.Millisecond).String()
	if !strings.Contains(out, "DETECTIONS DIFFER for cam") || !strings.Contains(out, "- recorded only  "+at) {
		t.Errorf("report lacks the moved motion start (%s):\n%s", at, out)
	}
}

// A head that never fires, in place of the shipped one, misses the
// recorded wake word: the detections differ, and so does what the agent
// decided. (A stricter threshold cannot: the shipped head scores the
// recorded phrase 1.0.)
func TestDetectorsReplayDeafHeadDiverges(t *testing.T) {
	in := wakeword.WindowLen * wakeword.EmbedDim
	deaf, err := wakeword.NewHead(wakeword.HeadInfo{Name: "hey_robot", Frontend: wakeword.SpeechFrontendID, Threshold: 0.5},
		[]wakeword.Layer{{In: in, Out: 1, W: make([]float32, in), B: []float32{-20}}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := wakeword.WriteHead(&b, deaf); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "deaf.eawh")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := detect(t, "wake-command.mcap", func(y string) string {
		return strings.Replace(y, "model: builtin", "model: "+p, 1)
	})
	if err != nil {
		t.Fatal(err)
	}
	out := report(rep)
	if len(rep.Detectors) != 1 || len(rep.Detectors[0].Missing) != 1 || rep.Detectors[0].Missing[0].Kind != "wake_word" || len(rep.Detectors[0].Replayed) != 0 {
		t.Fatalf("want the wake word missing:\n%s", out)
	}
	if rep.Divergence == nil || rep.Divergence.Kind != "decision" {
		t.Errorf("want the wake word's decision missing too:\n%s", out)
	}
}

// Asked for detectors, a recording without the frames or audio they need
// is refused with the channel that is missing.
func TestDetectorsReplayNeedsInput(t *testing.T) {
	for scenario, c := range map[string]struct{ sensor, want string }{
		"motion-detect.mcap": {"  - name: mic\n    kind: mic\n    options: {source: sim}\n", `sensor "mic": no /audio/mic.audio`},
		"wake-command.mcap":  {"  - name: cam\n    kind: camera\n    options: {source: sim}\n", `sensor "cam": no /obs/cam.snapshot or /obs/cam.motion_snapshot`},
	} {
		_, err := detect(t, scenario, func(y string) string {
			return strings.Replace(y, "sensors:\n", "sensors:\n"+c.sensor, 1)
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", scenario, err, c.want)
		}
	}
	for mode, want := range map[string]string{"maybe": "want recorded or detectors", "detectors": "the board has no detectors to run"} {
		_, err := replay.Run(context.Background(), filepath.Join(scenarios, "estop.mcap"), replay.Options{Detections: mode})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("--detections %s on a board without camera or microphone: %v, want %q", mode, err, want)
		}
	}
}

// A frame that is not a JPEG is counted and reported, and the detector
// goes on with the next.
func TestDetectorsReplayCountsCorruptFrame(t *testing.T) {
	dir := t.TempDir()
	const recorded = `device: {id: frames, platform: sim}
data_dir: state
llm: {enabled: false}
plugins: {mqtt: {enabled: false}}
record: {frames: {interval: 100ms}}
sensors:
  - {name: cam, kind: camera, enabled: false, options: {source: sim, width: 64, height: 48}} # on in the replay
`
	n, file, stop := recordBoard(t, dir, recorded, "frames.mcap")
	var good bytes.Buffer
	if err := jpeg.Encode(&good, image.NewGray(image.Rect(0, 0, 64, 48)), nil); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for i := range 12 {
		data := good.Bytes()
		if i == 5 {
			data = data[:len(data)/3] // cut short
		}
		n.World.Append(worldmodel.Observation{Time: t0.Add(time.Duration(i) * 200 * time.Millisecond), Source: "cam.snapshot",
			Kind: worldmodel.BlobRef, Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: bytes.Clone(data)}})
	}
	stop()

	replayed := strings.Replace(recorded, "enabled: false, options", "enabled: true, options", 1)
	path := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(path, []byte(replayed), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := board.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := replay.Run(context.Background(), file, replay.Options{Board: cfg, Dir: dir, Detections: "detectors"})
	if err != nil {
		t.Fatal(err)
	}
	out := report(rep)
	if len(rep.Detectors) != 1 || rep.Detectors[0].Fed != 12 || rep.Detectors[0].Bad != 1 ||
		!strings.Contains(out, "1 of 12 inputs could not be used; the first at +") || !strings.Contains(out, "(cam.snapshot): bad frame: decode jpeg:") {
		t.Fatalf("want 12 frames fed, 1 bad:\n%s", out)
	}
}
