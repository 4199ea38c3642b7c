package camera

import (
	"bytes"
	"image"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/camera/camsim"
	"github.com/edgeagent/edgeagent/sensors/sensortest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// simBlock: someone crosses the view every 20 s of scene time, rendered as
// fast as it goes (pace off), so a test sees several walks in a moment.
const simBlock = `
- name: cam
  kind: camera
  interval: 20ms
  options:
    source: sim
    pace: false
    width: 160
    height: 120
    fps: 10
    snapshot_interval: 2s
    motion:
      off_delay: 2s
    sim: {objects: 1, every: 20s, noise: 3, drift: 0.05, drift_period: 30s}
`

func TestSimCameraRaisesMotionEvents(t *testing.T) {
	cfg := sensortest.Board(t, "sim", simBlock)
	rec := sensortest.NewRecorder()
	stop := sensortest.Start(t, cfg, rec)
	rec.WaitFor(t, 20*time.Second, "two walks (start, end, start, end)", func() bool {
		return len(rec.Events(EventMotionEnd)) >= 2
	})
	stop()

	kinds := rec.EventKinds()
	if !strings.HasPrefix(kinds, "motion_start,motion_end,motion_start,motion_end") {
		t.Fatalf("events %s, want start and end alternating", kinds)
	}
	o, _ := DecodeOpts(cfg)
	scene, _ := camsim.New(simConfig(o))
	for _, e := range rec.Events(EventMotionStart) {
		if e.Priority != worldmodel.High || e.Source != "cam" {
			t.Errorf("motion_start %v from %q, want high from cam", e.Priority, e.Source)
		}
		boxes, _ := e.Data["boxes"].([][4]int)
		frame, _ := e.Data["frame"].(uint64)
		if len(boxes) == 0 || e.Data["area_pct"].(float64) <= 0 {
			t.Fatalf("motion_start without boxes or area: %v", e.Data)
		}
		// The boxes are where the walker is, in frame coordinates.
		truth := scene.Boxes(int(frame), nil)
		if len(truth) == 0 {
			t.Fatalf("motion_start at frame %d with nobody in view", frame)
		}
		b := image.Rect(boxes[0][0], boxes[0][1], boxes[0][2], boxes[0][3])
		if !b.Overlaps(truth[0]) {
			t.Errorf("frame %d: box %v misses the walker at %v", frame, b, truth[0])
		}
	}
	for _, e := range rec.Events(EventMotionEnd) {
		// a walk takes 6 s to cross the view at 10 fps
		if e.Priority != worldmodel.Normal || e.Data["duration_s"].(float64) < 3 || e.Data["frames"].(int) < 30 {
			t.Errorf("motion_end %v %v", e.Priority, e.Data)
		}
	}
	// Updates are recorded while motion is on, not raised.
	if ups := rec.Observations("cam.motion_update"); len(ups) == 0 || ups[0].Event.Kind != EventMotionUpdate || ups[0].Event.Priority != worldmodel.Low {
		t.Errorf("motion_update observations: %v", ups)
	}
	if v := rec.Values("cam.motion"); len(v) < 5 || !containsAll(v, 0, 1) {
		t.Errorf("cam.motion readings %v, want 0s and 1s", v)
	}
	for _, src := range []string{"cam.snapshot", "cam.motion_snapshot"} {
		obs := rec.Observations(src)
		if len(obs) == 0 {
			t.Fatalf("no %s", src)
		}
		b := obs[len(obs)-1].Blob
		img, err := jpeg.Decode(bytes.NewReader(b.Data))
		if err != nil || b.MIME != "image/jpeg" || img.Bounds().Dx() != 160 {
			t.Fatalf("%s: %s %v %v", src, b.MIME, err, img.Bounds())
		}
	}
	for _, src := range []string{"cam.fps", "cam.drops", "cam.motion_area", "cam.health"} {
		if len(rec.Observations(src)) == 0 {
			t.Errorf("no %s observations; have %v", src, rec.Sources())
		}
	}
	if fps := rec.Values("cam.fps"); fps[len(fps)-1] <= 0 && fps[0] <= 0 {
		t.Errorf("fps readings %v", fps)
	}
}

func containsAll(v []float64, want ...float64) bool {
	for _, w := range want {
		found := false
		for _, x := range v {
			if x == w {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// A clip that ends leaves the camera idle (not failing, not restarting)
// until it is stopped; motion that was on still ends after the off delay.
func TestClipEndIdlesAndMotionTimesOut(t *testing.T) {
	// 30 frames: the walker is still in view when the clip ends.
	path := mjpegClip(t, "walk.mjpeg", 30, camsim.Config{Width: 64, Height: 48, Seed: 2, Noise: 2,
		Objects: []camsim.Object{{W: 12, H: 20, Y: 10, Speed: 2, Start: 15, Level: 200}}})
	cfg := sensortest.Board(t, "sim", `
- name: door
  kind: camera
  interval: 10ms
  options:
    source: file
    path: `+path+`
    pace: false
    motion: {off_delay: 100ms, calibration_frames: 5}
`)
	rec := sensortest.NewRecorder()
	sensortest.Start(t, cfg, rec)
	rec.WaitFor(t, 5*time.Second, "motion_end after the clip ended", func() bool {
		return len(rec.Events(EventMotionEnd)) == 1
	})
	e := rec.Events(EventMotionEnd)[0]
	if !strings.Contains(e.Message, "no frames") {
		t.Errorf("motion_end %q, want it to say frames stopped", e.Message)
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(rec.Events(sensors.EventFault)); n != 0 {
		t.Errorf("a clip ending is not a fault: %s", rec.EventKinds())
	}
	if n := len(rec.Events(EventMotionStart)); n != 1 {
		t.Errorf("%d motion starts, want 1 (the clip was not replayed)", n)
	}
}

func TestOptionErrors(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{"options: {source: webcam}", "options.source: want sim"},
		{"options: {source: file}", "options.path: source file needs one"},
		{"options: {source: exec, width: 641, command: [x]}", "even width"},
		{"options: {source: gocv, device: '0', pipeline: 'x ! appsink'}", "exactly one of"},
		{"options: {motion: {threshold: 0}}", "options.motion.threshold: want 1..255"},
		{"options: {motion: {masks: ['1,2']}}", "masks[0]"},
		{"options: {snapshot_quality: 0}", "snapshot_quality"},
		{"options: {sorce: sim}", "sorce"},                    // typo: unknown key, from the board loader
		{"options: {motion: {off_delay: soon}}", "off_delay"}, // not a duration
	} {
		cfg, err := sensortest.ParseBoard("sim", "- name: c\n  kind: camera\n  "+c.block)
		if err == nil {
			_, err = sensors.New(cfg)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to mention %q", c.block, err, c.want)
		}
	}
	// Unknown keys carry the line and column.
	cfg, _ := sensortest.ParseBoard("sim", "- name: c\n  kind: camera\n  options:\n    motion:\n      treshold: 3")
	if _, err := sensors.New(cfg); err == nil || !strings.Contains(err.Error(), "test.yaml:") {
		t.Errorf("typo in a nested option: %v, want file:line:col", err)
	}
}

func TestGocvNeedsTheTag(t *testing.T) {
	if gocvBuilt {
		t.Skip("built with -tags gocv")
	}
	cfg := sensortest.Board(t, "sim", "- name: c\n  kind: camera\n  options: {source: gocv, device: '0'}")
	s, err := sensors.New(cfg)
	if err != nil {
		t.Fatal(err) // a board for a gocv build still checks on any build
	}
	rec := sensortest.NewRecorder()
	done := make(chan error, 1)
	go func() { done <- s.Run(t.Context(), rec) }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "-tags gocv") {
			t.Fatalf("Run: %v, want it to say how to build", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run kept retrying a backend that is not compiled in")
	}
}
