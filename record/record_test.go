package record

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/jpeg"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/worldmodel"
)

var t0 = time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func testOptions() Options {
	o := DefaultOptions()
	o.ChunkBytes = 4096
	return o
}

func testHeader() Header {
	return Header{Meta: map[string]string{"device": "bot"}, Board: []byte("device: {id: bot, platform: sim}\n")}
}

// rig is a recorder on a fresh world model with a fake clock, running.
type rig struct {
	t     *testing.T
	world *worldmodel.Model
	clk   *clock.Fake
	r     *Recorder
	stop  func()
}

func newRig(t *testing.T, o Options) *rig {
	t.Helper()
	rg := newRigStopped(t, o)
	rg.run()
	return rg
}

// newRigStopped is a rig whose recorder does not run until run.
func newRigStopped(t *testing.T, o Options) *rig {
	t.Helper()
	world := worldmodel.New(worldmodel.Config{DefaultCapacity: 4096, Events: 4096, Records: 4096})
	clk := clock.NewFake(t0)
	r, err := New(world, o, clk, quiet(), "bot", testHeader)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{t: t, world: world, clk: clk, r: r}
}

func (rg *rig) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); rg.r.Run(ctx) }()
	var once sync.Once
	rg.stop = func() { once.Do(func() { cancel(); <-done }) }
	rg.t.Cleanup(rg.stop)
}

// waitFor polls cond; it bounds how long a broken recorder can hang the
// test, it does not measure anything.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func jpegBytes(t *testing.T) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, image.NewGray(image.Rect(0, 0, 32, 24)), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// feed puts one of each kind of item into the world model: 100 readings,
// a text, a motion start with boxes, a snapshot, a tool call and a decision.
func feed(t *testing.T, w *worldmodel.Model) int {
	for i := range 100 {
		w.Append(worldmodel.Observation{Time: t0.Add(time.Duration(i) * time.Second), Source: "env.temperature", Kind: worldmodel.Reading, Value: 20 + float64(i)/10, Unit: "°C"})
	}
	w.Append(worldmodel.Observation{Time: t0, Source: "mic.transcript", Kind: worldmodel.Text, Text: "turn on the headlight"})
	w.Record(worldmodel.Event{Time: t0.Add(time.Second), Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High,
		Data: map[string]any{"boxes": [][4]int{{1, 2, 10, 12}}, "width": 32, "height": 24}})
	w.Append(worldmodel.Observation{Time: t0.Add(time.Second), Source: "front_cam.snapshot", Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: jpegBytes(t)}})
	w.Note(worldmodel.Record{Time: t0.Add(2 * time.Second), Kind: "tool_call", Source: "headlight.set",
		Data: json.RawMessage(`{"caller":"reflex","params":{"on":true},"ok":true}`)})
	w.Record(worldmodel.Event{Time: t0.Add(2 * time.Second), Kind: "decision", Source: "agent", Priority: worldmodel.Low,
		Data: map[string]any{"cycle": 1, "path": "reflex"}})
	// messages: readings, text, event + annotations, image, record, decision
	return 100 + 1 + 2 + 1 + 1 + 1
}

// recordFed records what feed appends into one file with options o and
// returns the completed file and how many messages it must hold.
func recordFed(t *testing.T, o Options) (path string, want int) {
	t.Helper()
	rg := newRig(t, o)
	path = filepath.Join(t.TempDir(), "run.mcap")
	rg.r.StartFile(path)
	want = feed(t, rg.world)
	waitFor(t, "messages written", func() bool { return rg.r.Status().Written >= uint64(want) })
	rg.r.Stop()
	waitFor(t, "the file completed", func() bool { in, err := recording.Read(path, nil); return err == nil && in.Complete })
	return path, want
}

func TestRecordsEveryKindWithSchemas(t *testing.T) {
	path, want := recordFed(t, testOptions())

	seen := map[string]int{}
	in, err := recording.Read(path, func(m recording.Msg) error {
		seen[m.Channel.Topic]++
		if !json.Valid(m.Data) {
			t.Errorf("%s: invalid JSON", m.Channel.Topic)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for topic, n := range map[string]int{"/obs/env.temperature": 100, "/obs/mic.transcript": 1, "/events/front_cam": 1,
		"/annotations/front_cam": 1, "/obs/front_cam.snapshot": 1, "/tool_call/headlight.set": 1, "/decisions": 1} {
		if seen[topic] != n {
			t.Errorf("%s: %d messages, want %d", topic, seen[topic], n)
		}
	}
	schemaOf := map[string]string{"/obs/env.temperature": SchemaReading, "/obs/front_cam.snapshot": SchemaImage,
		"/annotations/front_cam": SchemaAnnotations, "/tool_call/headlight.set": SchemaRecord, "/decisions": SchemaEvent}
	for topic, s := range schemaOf {
		if c := in.Channel(topic); c == nil || c.Schema != s || c.Encoding != "json" {
			t.Errorf("%s: channel %+v, want schema %s in json", topic, c, s)
		}
	}
	if in.Meta[MetaBuild]["device"] != "bot" || !bytes.Contains(in.Attachments[BoardFile], []byte("platform: sim")) {
		t.Errorf("metadata %v, attachments %v", in.Meta, in.Attachments)
	}
	if in.Stats["dropped"] != 0 || in.Stats["written"] < uint64(want) {
		t.Errorf("final counters %v", in.Stats)
	}
	if got := in.Start; !got.Equal(t0) {
		t.Errorf("start %v, want %v", got, t0)
	}
}

func TestEverySchemaIsJSON(t *testing.T) {
	for name, s := range schemas {
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil || v["title"] != name {
			t.Errorf("%s: %v (title %v)", name, err, v["title"])
		}
	}
}

func TestFrameRate(t *testing.T) {
	e := newEncoder(FrameOptions{Enabled: true, Interval: time.Second, Motion: true})
	img := &worldmodel.Blob{MIME: "image/jpeg", Data: []byte{0xff, 0xd8}}
	kept := func(from, to time.Duration) int {
		n := 0
		for d := from; d < to; d += 200 * time.Millisecond {
			n += len(e.encode(nil, worldmodel.Item{Kind: worldmodel.ItemObservation,
				Obs: worldmodel.Observation{Time: t0.Add(d), Source: "cam.snapshot", Kind: worldmodel.BlobRef, Blob: img}}))
		}
		return n
	}
	if n := kept(0, 5*time.Second); n != 5 {
		t.Errorf("without motion: %d of 25 frames kept, want 5 (1 fps)", n)
	}
	e.encode(nil, worldmodel.Item{Kind: worldmodel.ItemEvent, Event: worldmodel.Event{Time: t0.Add(5 * time.Second), Kind: "motion_start", Source: "cam"}})
	if n := kept(5*time.Second, 7*time.Second); n != 10 {
		t.Errorf("during motion: %d of 10 frames kept, want all", n)
	}
	e.encode(nil, worldmodel.Item{Kind: worldmodel.ItemEvent, Event: worldmodel.Event{Time: t0.Add(7 * time.Second), Kind: "motion_end", Source: "cam"}})
	if n := kept(7*time.Second, 9*time.Second); n != 2 {
		t.Errorf("after motion: %d of 10 frames kept, want 2", n)
	}
	if e.skipped != 25-5+10-2 {
		t.Errorf("skipped %d", e.skipped)
	}
	// Live frames (and their overlays) exist only while a dashboard
	// watches: never recorded, even during motion.
	e.encode(nil, worldmodel.Item{Kind: worldmodel.ItemEvent, Event: worldmodel.Event{Time: t0.Add(10 * time.Second), Kind: "motion_start", Source: "cam"}})
	ev := &worldmodel.Event{Kind: "live_motion", Source: "cam", Data: map[string]any{"boxes": [][4]int{{1, 2, 3, 4}}}}
	for _, o := range []worldmodel.Observation{{Time: t0.Add(10 * time.Second), Source: "cam.live", Kind: worldmodel.BlobRef, Blob: img},
		{Time: t0.Add(10 * time.Second), Source: "cam.live_motion", Kind: worldmodel.EventRef, Event: ev}} {
		if msgs := e.encode(nil, worldmodel.Item{Kind: worldmodel.ItemObservation, Obs: o}); len(msgs) != 0 {
			t.Errorf("%s recorded: %v", o.Source, msgs)
		}
	}
}

// messages lists a file's messages as topic/seq strings, in file order.
func messages(t *testing.T, path string) ([]string, *recording.Info) {
	t.Helper()
	var out []string
	in, err := recording.Read(path, func(m recording.Msg) error {
		out = append(out, m.Channel.Topic+"#"+string(rune('0'+m.Seq%10)))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out, in
}

// A power cut: the file as it is on the disk while recording holds every
// message up to the last flush; a file cut anywhere reads as a prefix.
func TestTruncatedFileReadsUpToLastChunk(t *testing.T) {
	rg := newRig(t, testOptions())
	dir := t.TempDir()
	path := filepath.Join(dir, "run.mcap")
	rg.r.StartFile(path)
	want := feed(t, rg.world)
	waitFor(t, "messages written", func() bool { return rg.r.Status().Written >= uint64(want) })
	rg.clk.Advance(testOptions().FlushEvery) // the periodic flush
	waitFor(t, "the flush", func() bool { return rg.r.Status().Written >= uint64(want)+1 })
	cut, _ := os.ReadFile(path) // the disk at the moment of the power cut
	snap := filepath.Join(dir, "cut.mcap")
	if err := os.WriteFile(snap, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	got, in := messages(t, snap)
	if len(got) != want+1 || in.Complete || in.Damage == "" {
		t.Fatalf("power cut after a flush: %d messages (complete %v, damage %q), want all %d", len(got), in.Complete, in.Damage, want+1)
	}
	rg.r.Stop()
	waitFor(t, "the file completed", func() bool { in, err := recording.Read(path, nil); return err == nil && in.Complete })

	full, _ := messages(t, path)
	data, _ := os.ReadFile(path)
	last := -1
	for size := 8; size < len(data); size += 61 {
		p := filepath.Join(dir, "t.mcap")
		if err := os.WriteFile(p, data[:size], 0o644); err != nil {
			t.Fatal(err)
		}
		got, in := messages(t, p)
		if in.Complete {
			t.Fatalf("cut at %d of %d: reported complete", size, len(data))
		}
		if len(got) < last || strings.Join(got, ",") != strings.Join(full[:len(got)], ",") {
			t.Fatalf("cut at %d: %d messages, not a growing prefix of the %d", size, len(got), len(full))
		}
		last = len(got)
	}
	if last < want/2 {
		t.Errorf("files cut near the end read only %d of %d messages", last, len(full))
	}
}

func TestNotMCAP(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.mcap")
	os.WriteFile(p, []byte("secret: hunter2\nmore text here"), 0o644)
	_, err := recording.Read(p, nil)
	if err == nil || strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "[115 ") {
		t.Fatalf("err = %v: want 'not an MCAP file' without the content", err)
	}
}

// A directory that cannot be written (here: under a regular file) pauses
// the recording with a warning and counted drops; the model is never
// blocked, and once the disk is usable again the recording resumes.
func TestUnwritableDirDegradesAndRecovers(t *testing.T) {
	rg := newRig(t, testOptions())
	base := t.TempDir()
	blocker := filepath.Join(base, "rec")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rg.r.StartDir(filepath.Join(blocker, "sub"))
	n := feed(t, rg.world)
	waitFor(t, "the drops", func() bool { return rg.r.Status().Dropped >= uint64(n) })
	if st := rg.r.Status(); !strings.HasPrefix(st.State, "degraded") {
		t.Fatalf("state %q, want degraded", st.State)
	}
	os.Remove(blocker)
	rg.clk.Advance(testOptions().Retry)
	rg.world.Append(worldmodel.Observation{Time: t0, Source: "env.temperature", Kind: worldmodel.Reading, Value: 1})
	waitFor(t, "recording resumed", func() bool { return rg.r.Status().State == "recording" && rg.r.Status().Written > 0 })
	files, _ := filepath.Glob(filepath.Join(blocker, "sub", "bot-*.mcap"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
}

// A full disk (a 192 KiB tmpfs) fails a write mid-file: the recording
// pauses, the file keeps what reached it, the model goes on.
func TestFullDiskDegrades(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	if err := mountTmpfs(dir); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() { unmount(dir) })
	o := testOptions()
	o.Frames.Interval = 0
	rg := newRig(t, o)
	path := filepath.Join(dir, "full.mcap")
	rg.r.StartFile(path)
	noise := make([]byte, 40<<10) // incompressible, like a JPEG
	rand.NewChaCha8([32]byte{1}).Read(noise)
	big := &worldmodel.Blob{MIME: "image/jpeg", Data: noise}
	for i := 0; !strings.HasPrefix(rg.r.Status().State, "degraded"); i++ {
		if i > 100000 {
			t.Fatal("never degraded on a full disk")
		}
		rg.world.Append(worldmodel.Observation{Time: t0.Add(time.Duration(i) * time.Millisecond), Source: "cam.snapshot", Kind: worldmodel.BlobRef, Blob: big})
		if i%8 == 7 {
			waitFor(t, "the queue to drain", func() bool { return rg.r.Status().Queued == 0 })
		}
	}
	if rg.r.Status().Dropped == 0 {
		t.Error("no drops counted")
	}
	in, err := recording.Read(path, nil)
	if err != nil || in.Messages == 0 {
		t.Fatalf("the file on the full disk: %v, %+v", err, in)
	}
}

func TestShrinkHalvesALargeFrame(t *testing.T) {
	img := image.NewYCbCr(image.Rect(0, 0, 640, 480), image.YCbCrSubsampleRatio420)
	for i := range img.Y {
		img.Y[i] = uint8(i * 7)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	big := bytes.Clone(b.Bytes())
	out, err := shrink(big, 320, 60, &b)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(out))
	if err != nil || cfg.Width != 320 || cfg.Height != 240 || len(out) >= len(big) {
		t.Fatalf("%dx%d, %d bytes from %d (%v)", cfg.Width, cfg.Height, len(out), len(big), err)
	}
	if same, _ := shrink(out, 320, 60, &b); !bytes.Equal(same, out) {
		t.Error("a frame already small enough was re-encoded")
	}
	if kept, err := shrink([]byte("not a jpeg"), 320, 60, &b); err == nil || string(kept) != "not a jpeg" {
		t.Errorf("a broken frame: %q, %v", kept, err)
	}
}

func TestZstdChunks(t *testing.T) {
	o := testOptions()
	o.Compression = "zstd"
	path, want := recordFed(t, o)
	if got, _ := messages(t, path); len(got) != want {
		t.Fatalf("%d messages, want %d", len(got), want)
	}
}

// A directory session starts a new file when the current one is max_age
// old and keeps only the newest keep files of the device.
func TestRotationByAgeKeepsNewest(t *testing.T) {
	o := testOptions()
	o.Keep = 2
	rg := newRig(t, o)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.mcap"), []byte("not ours"), 0o644)
	rg.r.StartDir(dir)
	for i := range 4 {
		seq := rg.world.Append(worldmodel.Observation{Time: t0, Source: "env.temperature", Kind: worldmodel.Reading, Value: float64(i)})
		waitFor(t, "the reading written", func() bool { return rg.r.Through() >= seq })
		rg.clk.Advance(o.MaxAge + time.Second) // the next message opens a new file
	}
	files, _ := filepath.Glob(filepath.Join(dir, "bot-*.mcap"))
	if len(files) != 2 {
		t.Fatalf("files %v, want the newest 2", files)
	}
	if _, err := os.Stat(filepath.Join(dir, "notes.mcap")); err != nil {
		t.Error("a file that is not the device's recording was deleted")
	}
	rg.r.Stop()
	for _, f := range files {
		waitFor(t, "complete files", func() bool { in, err := recording.Read(f, nil); return err == nil && in.Complete && in.Messages >= 1 })
	}
}
