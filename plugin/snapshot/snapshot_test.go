package snapshot_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/nodetest"
	_ "github.com/edgeagent/edgeagent/plugin/snapshot"
	_ "github.com/edgeagent/edgeagent/sensors/camera" // the camera kind
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func newNode(t *testing.T, sensors string) *node.Node {
	t.Helper()
	return nodetest.New(t, "plugins: {mqtt: {enabled: false}}\nllm: {enabled: false}\n"+sensors)
}

const oneCamera = `sensors:
  - name: front_cam
    kind: camera
    options: {source: sim}
`

func jpegOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i * 7919 % 251) // noise: compresses badly
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func call(n *node.Node, caller string, params string) (tools.Result, error) {
	return n.Tools.Invoke(context.Background(), tools.Call{Caller: caller, Tool: "camera.snapshot", Params: json.RawMessage(params)})
}

func TestSnapshotSkill(t *testing.T) {
	n := newNode(t, oneCamera)
	if _, err := call(n, "cli", `{}`); err == nil || !strings.Contains(err.Error(), "no snapshot yet") {
		t.Fatalf("before any frame: %v", err)
	}
	latest, moved := jpegOf(t, 320, 240), jpegOf(t, 32, 24)
	n.World.Append(worldmodel.Observation{Time: time.Now().Add(-2 * time.Second), Source: "front_cam.snapshot",
		Kind: worldmodel.BlobRef, Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: latest}})
	res, err := call(n, "mqtt", `{}`) // a skill: offered over MQTT, with read permission
	if err != nil {
		t.Fatal(err)
	}
	v := res.Value.(map[string]any)
	got, _ := base64.StdEncoding.DecodeString(v["jpeg_base64"].(string))
	if !bytes.Equal(got, latest) || v["width"] != 320 || v["which"] != "latest" || v["age_s"].(float64) < 2 {
		t.Fatalf("latest: %v", v)
	}
	if _, err := call(n, "cli", `{"which": "motion"}`); err == nil || !strings.Contains(err.Error(), "no motion") {
		t.Fatalf("motion snapshot before any motion: %v", err)
	}
	n.World.Append(worldmodel.Observation{Source: "front_cam.motion_snapshot", Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: moved}})
	res, err = call(n, "cli", `{"camera": "front_cam", "which": "motion"}`)
	if err != nil || res.Value.(map[string]any)["width"] != 32 {
		t.Fatalf("motion snapshot: %v %v", res.Value, err)
	}
	// Too big for the asked size: scaled down, and said so.
	res, err = call(n, "cli", `{"max_bytes": 4096}`)
	if err != nil {
		t.Fatal(err)
	}
	v = res.Value.(map[string]any)
	if v["bytes"].(int) > 4096 || v["width"].(int) >= 320 || len(res.Notes) == 0 {
		t.Fatalf("max_bytes: %v %v", v, res.Notes)
	}
	// The schema refuses unknown cameras and values before the tool runs.
	for _, bad := range []string{`{"camera": "back_cam"}`, `{"which": "oldest"}`, `{"max_bytes": 10}`, `{"zoom": 2}`} {
		if _, err := call(n, "cli", bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestSnapshotPublishGoesThroughMQTTPublish(t *testing.T) {
	n := newNode(t, oneCamera)
	if _, err := call(n, "cli", `{"topic": "x/snap"}`); err == nil {
		t.Fatal("published with no snapshot")
	}
	n.World.Append(worldmodel.Observation{Source: "front_cam.snapshot", Kind: worldmodel.BlobRef,
		Blob: &worldmodel.Blob{MIME: "image/jpeg", Data: jpegOf(t, 640, 480)}}) // ~250 KB of noise
	if _, err := call(n, "cli", `{"topic": "x/snap"}`); err == nil || !strings.Contains(err.Error(), "MQTT is not enabled") {
		t.Fatalf("without MQTT: %v", err)
	}
	// Stand in for the control plane's skill, with its permission.
	var published struct{ Topic, Payload string }
	if err := n.Tools.Register("mqtt", tools.Typed(tools.Spec{Name: "mqtt.publish", Description: "publish", Permission: "publish",
		Params: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string"},"payload":{}},"required":["topic","payload"]}`)},
		func(_ context.Context, p struct {
			Topic   string `json:"topic"`
			Payload string `json:"payload"`
		}) (tools.Result, error) {
			published.Topic, published.Payload = p.Topic, p.Payload
			return tools.Result{Value: map[string]any{"queued": false}}, nil
		})); err != nil {
		t.Fatal(err)
	}
	res, err := call(n, "mqtt", `{"topic": "edgeagent/t/notes/snap"}`)
	if err != nil {
		t.Fatal(err)
	}
	data, err := base64.StdEncoding.DecodeString(published.Payload)
	if err != nil || published.Topic != "edgeagent/t/notes/snap" || len(published.Payload) > 64<<10 {
		t.Fatalf("published %d base64 bytes to %q: %v", len(published.Payload), published.Topic, err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
		t.Fatalf("published payload is not a JPEG: %v", err)
	}
	if v := res.Value.(map[string]any); v["topic"] != "edgeagent/t/notes/snap" || v["jpeg_base64"] != nil {
		t.Fatalf("result %v", v)
	}
	// Publishing needs the caller's publish permission: reflexes have none.
	if _, err := call(n, "reflex", `{"topic": "edgeagent/t/notes/snap"}`); err == nil || !strings.Contains(err.Error(), "publish") {
		t.Fatalf("reflex published: %v", err)
	}
}

func TestNoCameraNoSkill(t *testing.T) {
	n := newNode(t, "")
	if _, err := n.Tools.Resolve("camera.snapshot"); err == nil {
		t.Fatal("camera.snapshot offered on a board without camera")
	}
}
