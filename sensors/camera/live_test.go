package camera

import (
	"bytes"
	"image/jpeg"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// watchSink is a recorder whose watcher says yes only while on is set.
type watchSink struct {
	*sensortest.Recorder
	on atomic.Bool
}

func (w *watchSink) Watched(source string) bool { return w.on.Load() && source == "cam.live" }

// Live frames are encoded only while someone watches, at live_fps of
// frame time, each with its motion overlay.
func TestLiveFramesOnlyWhileWatched(t *testing.T) {
	cfg := sensortest.Board(t, "sim", simBlock)
	out := &watchSink{Recorder: sensortest.NewRecorder()}
	stop := sensortest.Start(t, cfg, out)
	defer stop()
	out.WaitFor(t, 10*time.Second, "frames", func() bool { return len(out.Values("cam.fps")) >= 3 })
	if n := len(out.Observations("cam.live")); n != 0 {
		t.Fatalf("%d live frames with nobody watching", n)
	}
	out.on.Store(true)
	out.WaitFor(t, 10*time.Second, "20 live frames", func() bool { return len(out.Observations("cam.live")) >= 20 })
	out.on.Store(false)
	frames := out.Observations("cam.live")
	for i := 1; i < len(frames); i++ {
		if gap := frames[i].Time.Sub(frames[i-1].Time); gap < 90*time.Millisecond {
			t.Fatalf("live frames %v apart, want ≥ 100 ms at live_fps 10", gap)
		}
	}
	img, err := jpeg.Decode(bytes.NewReader(frames[0].Blob.Data))
	if err != nil || img.Bounds().Dx() != 160 {
		t.Fatalf("live frame: %v %v", err, img)
	}
	overlay := out.Observations("cam.live_motion")
	if len(overlay) < len(frames)-1 {
		t.Fatalf("%d overlays for %d frames", len(overlay), len(frames))
	}
	d := overlay[0].Event.Data
	if _, ok := d["boxes"].([][4]int); !ok || d["width"] != 160 || d["detect_ms"] == nil {
		t.Fatalf("overlay data %v", d)
	}
	if ms := out.Values("cam.detect_ms"); len(ms) == 0 || ms[0] <= 0 {
		t.Fatalf("detect_ms readings %v", ms)
	}
}
