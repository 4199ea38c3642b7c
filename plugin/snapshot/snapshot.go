// Package snapshot is the camera.snapshot skill: the latest frame of a
// camera, or the frame at its last motion start, as a JPEG, returned in
// base64 or published on MQTT.
//
// It reads the snapshots the camera sensor keeps in the world model
// (<camera>.snapshot, <camera>.motion_snapshot) and never touches the
// camera itself, so it works the same with a webcam, a CSI camera, a clip
// or the simulator, and never contends with the capture loop. It is a
// compiled-in plugin named "camera", loaded when the board has a camera.
package snapshot

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/plugin/cameras"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// publishTool is the MQTT control plane's skill the snapshot is published
// through, so that its topic allowlist and the caller's permissions apply.
const publishTool = "mqtt.publish"

// maxPublish keeps a published snapshot within one MQTT message of the
// control plane (64 KiB) once base64-encoded.
const maxPublish = 46 << 10

func init() { plugin.Register("camera", New) }

// Plugin provides camera.snapshot for the board's cameras.
type Plugin struct {
	cameras cameras.Set
	world   frames
	reg     publisher
	clock   clock.Clock
}

// frames are the cameras' latest frames: the world model.
type frames interface {
	Latest(source string) (worldmodel.Observation, bool)
}

// publisher calls mqtt.publish for a snapshot with publish: the tools
// registry.
type publisher interface {
	Invoke(context.Context, tools.Call) (tools.Result, error)
}

// New builds the plugin for a host; it declines on a board without camera.
func New(h plugin.Host) (hooks.Plugin, error) {
	p := &Plugin{cameras: cameras.Of(h), world: h.World(), reg: h.Tools(), clock: h.Clock()}
	if len(p.cameras) == 0 {
		return nil, hooks.Decline("no camera on this board")
	}
	return p, nil
}

// Info implements hooks.Plugin.
func (p *Plugin) Info() hooks.Info {
	return hooks.Info{Name: "camera", Version: "1", Description: "camera.snapshot: a camera's latest frame or its last motion start, as JPEG"}
}

type params struct {
	Camera   string `json:"camera"`
	Which    string `json:"which"`
	Topic    string `json:"topic"`
	MaxBytes int    `json:"max_bytes"`
}

// Tools implements tools.Provider.
func (p *Plugin) Tools() []tools.Tool {
	spec := p.cameras.Spec("camera.snapshot",
		"Get a camera's picture as a JPEG: the latest frame, or the frame at the last motion start. "+
			"Returns it in base64, or publishes it (base64) on an MQTT topic allowed by mqtt.publish_allow.",
		`"which": {"type": "string", "enum": ["latest", "motion"], "default": "latest", "description": "latest frame, or the frame at the last motion start"},
    "topic": {"type": "string", "minLength": 1, "maxLength": 256, "description": "publish on this MQTT topic instead of returning the picture"},
    "max_bytes": {"type": "integer", "minimum": 4096, "maximum": 1048576, "default": 262144, "description": "largest JPEG; bigger pictures are scaled down"}`,
		".snapshot", ".motion_snapshot")
	return []tools.Tool{tools.Typed(spec, p.snapshot)}
}

func (p *Plugin) snapshot(ctx context.Context, a params) (tools.Result, error) {
	cam, err := p.cameras.Pick(a.Camera)
	if err != nil {
		return tools.Result{}, err
	}
	source := cam + ".snapshot"
	if a.Which == "motion" {
		source = cam + ".motion_snapshot"
	}
	o, ok := p.world.Latest(source)
	if !ok || o.Blob == nil || len(o.Blob.Data) == 0 {
		if a.Which == "motion" {
			return tools.Result{}, fmt.Errorf("%s has seen no motion yet", cam)
		}
		return tools.Result{}, fmt.Errorf("%s has no snapshot yet (is it running, with snapshot_interval > 0?)", cam)
	}
	limit := a.MaxBytes
	if limit == 0 {
		limit = 256 << 10
	}
	if a.Topic != "" {
		limit = min(limit, maxPublish)
	}
	data, w, h, scaled, err := fit(o.Blob.Data, limit)
	if err != nil {
		return tools.Result{}, err
	}
	age := p.clock.Since(o.Time)
	info := map[string]any{
		"camera": cam, "which": whichOr(a.Which), "time": o.Time.UTC().Format(time.RFC3339Nano),
		"age_s": round1(age.Seconds()), "width": w, "height": h, "bytes": len(data), "mime": "image/jpeg",
	}
	var notes []string
	if scaled {
		notes = append(notes, fmt.Sprintf("scaled down to %dx%d to fit %d bytes", w, h, limit))
	}
	b64 := base64.StdEncoding.EncodeToString(data)
	if a.Topic == "" {
		info["jpeg_base64"] = b64
		return tools.Result{Value: info, Notes: notes}, nil
	}
	payload, _ := json.Marshal(map[string]any{"topic": a.Topic, "payload": b64})
	res, err := p.reg.Invoke(ctx, tools.Call{Caller: tools.CallerOf(ctx), Tool: publishTool, Params: payload})
	if err != nil {
		var te *tools.Error
		if errors.As(err, &te) && te.Code == tools.CodeNotFound {
			return tools.Result{}, errors.New("MQTT is not enabled on this board: cannot publish")
		}
		return tools.Result{}, fmt.Errorf("publishing: %w", err)
	}
	info["topic"] = a.Topic
	info["published"] = res.Value
	return tools.Result{Value: info, Notes: append(notes, res.Notes...)}, nil
}

func whichOr(w string) string {
	if w == "" {
		return "latest"
	}
	return w
}

func round1(v float64) float64 { return float64(int64(v*10+0.5)) / 10 }

// fit returns data as it is when it fits in limit bytes, else re-encoded
// at half the size until it does.
func fit(data []byte, limit int) (out []byte, w, h int, scaled bool, err error) {
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, false, fmt.Errorf("stored snapshot is not a JPEG: %w", err)
	}
	if len(data) <= limit {
		return data, cfg.Width, cfg.Height, false, nil
	}
	img, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, 0, 0, false, err
	}
	for range 5 {
		img = half(img)
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 70}); err != nil {
			return nil, 0, 0, false, err
		}
		if buf.Len() <= limit {
			b := img.Bounds()
			return buf.Bytes(), b.Dx(), b.Dy(), true, nil
		}
	}
	return nil, 0, 0, false, fmt.Errorf("snapshot does not fit in %d bytes", limit)
}

// half downsamples by two (nearest pixel: the result is a preview).
func half(img image.Image) image.Image {
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, max(1, b.Dx()/2), max(1, b.Dy()/2)))
	for y := out.Rect.Min.Y; y < out.Rect.Max.Y; y++ {
		for x := out.Rect.Min.X; x < out.Rect.Max.X; x++ {
			out.Set(x, y, img.At(b.Min.X+2*x, b.Min.Y+2*y))
		}
	}
	return out
}
