package vision_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/nodetest"
	_ "github.com/edgeagent/edgeagent/plugin/engine"
	"github.com/edgeagent/edgeagent/plugin/vision"
	_ "github.com/edgeagent/edgeagent/sensors/camera"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

const camera = `sensors:
  - name: front_cam
    kind: camera
    options: {source: sim}
`

func newNode(t *testing.T, src string) *node.Node {
	t.Helper()
	if !strings.Contains(src, "plugins:") {
		src = "plugins: {mqtt: {enabled: false}}\n" + src
	}
	return nodetest.New(t, src)
}

// A red square on white: what a real vision model can be asked about.
func redSquare(t testing.TB) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 320, 240))
	for y := range 240 {
		for x := range 320 {
			c := color.RGBA{255, 255, 255, 255}
			if x >= 110 && x < 210 && y >= 70 && y < 170 {
				c = color.RGBA{220, 20, 20, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func snapshot(n *node.Node, jpg []byte) {
	n.World.Append(worldmodel.Observation{Time: time.Now(), Source: "front_cam.snapshot", Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: jpg}})
}

func describe(n *node.Node, params string) (tools.Result, error) {
	return n.Tools.Invoke(context.Background(), tools.Call{Caller: "mqtt", Tool: "camera.describe", Params: json.RawMessage(params)})
}

// Without a vision model, the LLM or a camera the skill is absent, and the
// reason is logged where `check` shows it.
func TestAbsentWithoutVisionModel(t *testing.T) {
	t.Parallel()
	for why, src := range map[string]string{
		"no llm.vision_model":  "llm: {enabled: true, host: http://127.0.0.1:1}\n" + camera,
		"llm.enabled is false": "llm: {enabled: false, vision_model: moondream}\n" + camera,
		"no camera":            "llm: {enabled: true, host: http://127.0.0.1:1, vision_model: moondream}\n",
	} {
		var logs syncbuf.Buffer
		n, err := node.New(nodetest.Board(t, "plugins: {mqtt: {enabled: false}}\n"+src), node.Options{Log: slog.New(slog.NewTextHandler(&logs, nil)), NoStore: true})
		if err != nil {
			t.Fatal(err)
		}
		defer n.Close()
		for _, s := range n.Tools.List() {
			if s.Name == "camera.describe" {
				t.Errorf("%s: camera.describe present", why)
			}
		}
		if !strings.Contains(logs.String(), why) {
			t.Errorf("%s: log says %s", why, logs.String())
		}
	}
}

func fakeOllama(t *testing.T) *ollamatest.Server {
	return ollamatest.Start(t, "tiny:latest", "moondream:latest")
}

// The picture arrives base64-encoded with the question; the structured
// answer is the reply, the observation front_cam.description and a
// front_cam/person event; a low-confidence object raises nothing.
func TestDescribe(t *testing.T) {
	t.Parallel()
	srv := fakeOllama(t)
	srv.OnRequest(func(r ollamatest.Request) ollamatest.Answer {
		if r.Chat == nil || r.Chat.Model != "moondream" {
			return ollamatest.Answer{Status: 500, Error: "only the vision model is asked here"}
		}
		return ollamatest.Answer{Content: `{"answer": "A person is standing at the door.", "objects": [{"label": "Person", "confidence": 0.91}, {"label": "cat", "confidence": 0.2}]}`}
	})
	n := newNode(t, "llm: {enabled: true, host: "+srv.URL()+", vision_model: moondream}\n"+camera)
	if _, err := describe(n, `{}`); err == nil || !strings.Contains(err.Error(), "no snapshot yet") {
		t.Fatalf("before a snapshot: %v", err)
	}
	jpg := redSquare(t)
	snapshot(n, jpg)
	res, err := describe(n, `{"question": "Is someone at the door?"}`)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Value.(vision.Description)
	if d.Answer != "A person is standing at the door." || d.Camera != "front_cam" || len(d.Objects) != 2 || d.Objects[0].Label != "person" {
		t.Fatalf("%+v", d)
	}
	var chat *ollamatest.Request
	for _, r := range srv.Requests() {
		if r.Chat != nil && r.Chat.Model == "moondream" {
			chat = &r
		}
	}
	if chat == nil {
		t.Fatal("the vision model was not asked")
	}
	last := chat.Chat.Messages[len(chat.Chat.Messages)-1]
	if len(last.Images) != 1 || !bytes.Equal(last.Images[0], jpg) || !strings.Contains(last.Content, "Is someone at the door?") || len(chat.Chat.Format) == 0 {
		t.Fatalf("request: %d images, %q, format %s", len(last.Images), last.Content, chat.Chat.Format)
	}
	if o, ok := n.World.Latest("front_cam.description"); !ok || o.Text != d.Answer {
		t.Fatalf("observation %+v", o)
	}
	var person, cat int
	for _, e := range n.World.Events(0, worldmodel.Low, 0) {
		switch e.Key() {
		case "front_cam/person":
			person++
		case "front_cam/cat":
			cat++
		}
	}
	if person != 1 || cat != 0 {
		t.Fatalf("events: %d person, %d cat", person, cat)
	}
	recs := n.World.Records(0, 0)
	found := false
	for _, r := range recs {
		found = found || (r.Kind == "llm" && r.Source == "vision" && strings.Contains(string(r.Data), "image/jpeg"))
	}
	if !found {
		t.Fatal("no llm record of the exchange")
	}
}

// A model that ignores the schema still answers; its objects are not
// trusted. A broken server is an error, not a crash.
func TestUnstructuredAndFailingModel(t *testing.T) {
	t.Parallel()
	srv := fakeOllama(t)
	n := newNode(t, "llm: {enabled: true, host: "+srv.URL()+", vision_model: moondream}\n"+camera)
	snapshot(n, redSquare(t))
	srv.Push(ollamatest.Answer{Content: "A red square on a white wall."})
	res, err := describe(n, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Value.(vision.Description); d.Answer != "A red square on a white wall." || len(d.Objects) != 0 || len(res.Notes) != 1 {
		t.Fatalf("%+v %v", d, res.Notes)
	}
	srv.Push(ollamatest.Answer{Status: 500, Error: "model crashed"})
	if _, err := describe(n, `{}`); err == nil {
		t.Fatal("server error: no error")
	}
	if _, err := describe(n, `{"camera": "back_cam"}`); err == nil {
		t.Fatal("unknown camera accepted")
	}
}

// on_motion describes after a motion start, at most once per interval.
func TestOnMotion(t *testing.T) {
	t.Parallel()
	srv := fakeOllama(t)
	var mu sync.Mutex
	asked := 0
	srv.OnRequest(func(r ollamatest.Request) ollamatest.Answer {
		if r.Chat != nil && r.Chat.Model == "moondream" {
			mu.Lock()
			asked++
			mu.Unlock()
		}
		return ollamatest.Answer{Content: `{"answer": "A dog.", "objects": [{"label": "dog", "confidence": 0.8}]}`}
	})
	// The running camera detects no motion of its own: its sim scene has
	// someone walk through 2 s in, whose motion start and snapshot (not the
	// test's) were described when the test got there late.
	n := newNode(t, "llm: {enabled: true, host: "+srv.URL()+", vision_model: moondream}\n"+
		"plugins: {mqtt: {enabled: false}, vision: {on_motion: {enabled: true, min_interval: 1h}}}\n"+
		strings.Replace(camera, "{source: sim}", "{source: sim, motion: {enabled: false}}", 1))
	nodetest.Run(t, n)
	n.World.Append(worldmodel.Observation{Time: time.Now(), Source: "front_cam.motion_snapshot", Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: redSquare(t)}})
	for range 3 {
		// As the camera raises it: boxes in the analysed frame (160×120
		// here, half the JPEG's size).
		n.Raise(worldmodel.Event{Kind: "motion_start", Source: "front_cam", Priority: worldmodel.High,
			Data: map[string]any{"boxes": [][4]int{{60, 40, 100, 80}}, "width": 160, "height": 120, "snapshot": "front_cam.motion_snapshot"}})
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if o, ok := n.World.Latest("front_cam.description"); ok && o.Text == "A dog." {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no description after motion")
		}
	}
	time.Sleep(200 * time.Millisecond) // room for a second description, which must not come
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 {
		t.Fatalf("the vision model was asked %d times for one interval", asked)
	}
	// The model saw the moving region (80×80 of the analysed frame with
	// its margin → 160×160 of the JPEG), not the whole picture.
	for _, r := range srv.Requests() {
		if r.Chat == nil || r.Chat.Model != "moondream" {
			continue
		}
		img := r.Chat.Messages[len(r.Chat.Messages)-1].Images[0]
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(img))
		if err != nil || cfg.Width != 160 || cfg.Height != 160 {
			t.Fatalf("the model got a %d×%d picture (%v)", cfg.Width, cfg.Height, err)
		}
	}
}

// TestE2EVisionModel asks a real multimodal model on the Ollama server at
// OLLAMA_HOST about a red square. It skips unless
// EDGEAGENT_E2E_VISION_MODEL names a pulled model (e.g. moondream).
func TestE2EVisionModel(t *testing.T) {
	model := os.Getenv("EDGEAGENT_E2E_VISION_MODEL")
	if model == "" {
		t.Skip("EDGEAGENT_E2E_VISION_MODEL is not set (e.g. moondream, with `ollama pull moondream` on the server at OLLAMA_HOST)")
	}
	n := newNode(t, fmt.Sprintf("llm: {enabled: true, host: %q, vision_model: %s}\nplugins: {mqtt: {enabled: false}, vision: {timeout: 5m}}\n%s",
		os.Getenv("OLLAMA_HOST"), model, camera))
	snapshot(n, redSquare(t))
	res, err := describe(n, `{"question": "What colour is the square in the middle?"}`)
	if err != nil {
		t.Fatal(err)
	}
	d := res.Value.(vision.Description)
	t.Logf("%s answered in %.1f s: %q, objects %v", model, d.Seconds, d.Answer, d.Objects)
	if !strings.Contains(strings.ToLower(d.Answer), "red") {
		t.Errorf("the answer does not say red: %q", d.Answer)
	}
}

func TestOptionErrors(t *testing.T) {
	t.Parallel()
	for opts, want := range map[string]string{
		"timeout: 10ms":                 "plugins.vision.timeout",
		"max_tokens: 1":                 "plugins.vision.max_tokens",
		"min_confidence: 2":             "plugins.vision.min_confidence",
		"event_priority: urgent":        "plugins.vision.event_priority",
		"on_motion: {min_interval: 0s}": "plugins.vision.on_motion.min_interval",
		"colour: true":                  "colour",
	} {
		nodetest.Refused(t, "plugins: {mqtt: {enabled: false}, vision: {"+opts+"}}\nllm: {enabled: true, host: http://127.0.0.1:1, vision_model: moondream}\n"+camera, want)
	}
}
