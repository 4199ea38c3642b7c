package record

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// Channel kinds, in each channel's metadata ("kind"), so that a reader
// (info, export, replay) knows what a channel holds without parsing topics.
const (
	KindObservation = "observation"
	KindEvent       = "event"
	KindRecord      = "record"
	KindImage       = "image"
	KindAnnotations = "annotations"
	KindStats       = "stats"
	KindAudio       = "audio"
)

// Message is one message of a recording, encoded, before it is written.
type Message struct {
	Topic  string
	Schema string
	Kind   string // a Kind* constant
	Source string // the world-model source (observations, images) or the event/record source
	Time   time.Time
	Seq    uint64
	Data   []byte
}

// Topics. One channel per source, so Foxglove lists and plots each alone.
func obsTopic(source string) string          { return "/obs/" + source }
func eventTopic(source string) string        { return "/events/" + source }
func recordTopic(kind, source string) string { return "/" + kind + "/" + source }
func annotationTopic(camera string) string   { return "/annotations/" + camera }
func audioTopic(source string) string        { return "/audio/" + source }

// BlobTopic is the channel that holds a source's blobs of this MIME type
// whole (what a replay feeds to a detector); "" for blobs of which only the
// size is recorded.
func BlobTopic(source, mime string) string {
	switch blobKind(mime) {
	case KindImage:
		return obsTopic(source)
	case KindAudio:
		return audioTopic(source)
	}
	return ""
}

// blobKind is the kind of channel that keeps a blob whole: JPEG frames and
// audio; "" for other blobs.
func blobKind(mime string) string {
	switch {
	case mime == "image/jpeg":
		return KindImage
	case strings.HasPrefix(mime, "audio/"):
		return KindAudio
	}
	return ""
}

// TopicDecisions holds the agent's decisions (events of kind "decision",
// their trace in data.trace).
const (
	TopicDecisions = "/decisions"
	TopicStats     = "/recorder/stats"
)

// encoder turns stream items into messages, choosing which camera frames
// to keep: every snapshot while the camera sees motion (Frames.Motion),
// one per Frames.Interval otherwise, and always the frame at a motion start.
type encoder struct {
	frames    FrameOptions
	motion    map[string]bool      // camera -> motion on
	lastFrame map[string]time.Time // camera -> time of the last kept frame
	skipped   uint64               // frames left out by the rate rule
	jpegBuf   bytes.Buffer         // re-encoding scratch
}

func newEncoder(f FrameOptions) *encoder {
	return &encoder{frames: f, motion: map[string]bool{}, lastFrame: map[string]time.Time{}}
}

// encode appends the messages of one item (none, one, or two when an
// event carries motion boxes) to dst.
func (e *encoder) encode(dst []Message, it worldmodel.Item) []Message {
	switch it.Kind {
	case worldmodel.ItemObservation:
		return e.observation(dst, &it.Obs)
	case worldmodel.ItemEvent:
		return e.event(dst, &it.Event)
	case worldmodel.ItemRecord:
		r := &it.Record
		data := r.Data
		if len(data) == 0 {
			data = json.RawMessage("{}")
		}
		b := make([]byte, 0, 64+len(r.Kind)+len(r.Source)+len(data))
		b = append(b, `{"seq":`...)
		b = strconv.AppendUint(b, r.Seq, 10)
		b = append(b, `,"kind":`...)
		b = appendString(b, r.Kind)
		b = append(b, `,"source":`...)
		b = appendString(b, r.Source)
		b = append(b, `,"data":`...)
		b = append(b, data...)
		b = append(b, '}')
		return append(dst, Message{Topic: recordTopic(r.Kind, r.Source), Schema: SchemaRecord, Kind: KindRecord,
			Source: r.Source, Time: r.Time, Seq: r.Seq, Data: b})
	}
	return dst
}

func (e *encoder) observation(dst []Message, o *worldmodel.Observation) []Message {
	// A camera's live frames and their overlays (<camera>.live,
	// <camera>.live_motion) exist only while a dashboard watches: a
	// recording does not depend on whether someone looked. Its snapshots
	// are recorded by the frame rule instead.
	if strings.HasSuffix(o.Source, ".live") {
		e.skipped++
		return dst
	}
	if strings.HasSuffix(o.Source, ".live_motion") {
		return dst
	}
	m := Message{Topic: obsTopic(o.Source), Kind: KindObservation, Source: o.Source, Time: o.Time, Seq: o.Seq}
	switch o.Kind {
	case worldmodel.Reading:
		m.Schema = SchemaReading
		m.Data = marshal(struct {
			Seq    uint64  `json:"seq"`
			Source string  `json:"source"`
			Value  float64 `json:"value"`
			Unit   string  `json:"unit,omitempty"`
		}{o.Seq, o.Source, o.Value, o.Unit})
	case worldmodel.Text:
		m.Schema = SchemaText
		m.Data = marshal(struct {
			Seq    uint64 `json:"seq"`
			Source string `json:"source"`
			Text   string `json:"text"`
		}{o.Seq, o.Source, o.Text})
	case worldmodel.EventRef:
		if o.Event == nil {
			return dst
		}
		m.Schema, m.Data = SchemaEvent, eventJSON(o.Event)
		dst = append(dst, m)
		return e.boxes(dst, o.Event, o.Time, o.Seq)
	case worldmodel.BlobRef:
		if o.Blob == nil {
			return dst
		}
		switch blobKind(o.Blob.MIME) {
		case KindImage:
			return e.frame(dst, o)
		case KindAudio:
			return e.audio(dst, o)
		}
		m.Schema = SchemaBlob
		m.Data = marshal(struct {
			Seq    uint64 `json:"seq"`
			Source string `json:"source"`
			MIME   string `json:"mime,omitempty"`
			Bytes  int    `json:"bytes"`
		}{o.Seq, o.Source, o.Blob.MIME, len(o.Blob.Data)})
	default:
		return dst
	}
	return append(dst, m)
}

// audio keeps a microphone's chunk whole: its MIME type (rate, channels,
// sample format) and its bytes, base64 as in foxglove.CompressedImage.
func (e *encoder) audio(dst []Message, o *worldmodel.Observation) []Message {
	b := make([]byte, 0, 96+len(o.Source)+len(o.Blob.MIME)+base64.StdEncoding.EncodedLen(len(o.Blob.Data)))
	b = append(b, `{"timestamp":`...)
	b = appendStamp(b, o.Time)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, o.Seq, 10)
	b = append(b, `,"source":`...)
	b = appendString(b, o.Source)
	b = append(b, `,"mime":`...)
	b = appendString(b, o.Blob.MIME)
	b = append(b, `,"data":"`...)
	b = base64.StdEncoding.AppendEncode(b, o.Blob.Data)
	b = append(b, `"}`...)
	return append(dst, Message{Topic: audioTopic(o.Source), Schema: SchemaAudio, Kind: KindAudio, Source: o.Source,
		Time: o.Time, Seq: o.Seq, Data: b})
}

// cameraOf is the camera a snapshot source belongs to: "front_cam" for
// "front_cam.snapshot" and "front_cam.motion_snapshot".
func cameraOf(source string) string {
	if i := strings.LastIndexByte(source, '.'); i > 0 {
		return source[:i]
	}
	return source
}

func (e *encoder) frame(dst []Message, o *worldmodel.Observation) []Message {
	if !e.frames.Enabled {
		e.skipped++
		return dst
	}
	cam := cameraOf(o.Source)
	keep := strings.HasSuffix(o.Source, ".motion_snapshot") || (e.frames.Motion && e.motion[cam])
	if !keep {
		last, seen := e.lastFrame[cam]
		// A little slack: snapshots taken every Interval by frame times
		// must not be skipped for arriving a millisecond early.
		keep = !seen || o.Time.Sub(last) >= e.frames.Interval-e.frames.Interval/20 || o.Time.Before(last)
	}
	if !keep {
		e.skipped++
		return dst
	}
	e.lastFrame[cam] = o.Time
	// A frame that does not decode is kept as the camera sent it.
	img, _ := shrink(o.Blob.Data, e.frames.MaxWidth, e.frames.Quality, &e.jpegBuf)
	b := make([]byte, 0, 96+len(cam)+base64.StdEncoding.EncodedLen(len(img)))
	b = append(b, `{"timestamp":`...)
	b = appendStamp(b, o.Time)
	b = append(b, `,"frame_id":`...)
	b = appendString(b, cam)
	b = append(b, `,"format":"jpeg","data":"`...)
	b = base64.StdEncoding.AppendEncode(b, img)
	b = append(b, `"}`...)
	return append(dst, Message{Topic: obsTopic(o.Source), Schema: SchemaImage, Kind: KindImage, Source: o.Source,
		Time: o.Time, Seq: o.Seq, Data: b})
}

func (e *encoder) event(dst []Message, ev *worldmodel.Event) []Message {
	switch ev.Kind {
	case "motion_start":
		e.motion[ev.Source] = true
	case "motion_end":
		e.motion[ev.Source] = false
	}
	topic := eventTopic(ev.Source)
	if ev.Kind == "decision" {
		topic = TopicDecisions
	}
	dst = append(dst, Message{Topic: topic, Schema: SchemaEvent, Kind: KindEvent, Source: ev.Source,
		Time: ev.Time, Seq: ev.Seq, Data: eventJSON(ev)})
	return e.boxes(dst, ev, ev.Time, ev.Seq)
}

// eventJSON is the edgeagent.Event message of ev.
func eventJSON(ev *worldmodel.Event) []byte {
	type msg struct {
		Seq      uint64         `json:"seq"`
		Kind     string         `json:"kind"`
		Source   string         `json:"source"`
		Priority string         `json:"priority"`
		Message  string         `json:"message,omitempty"`
		Data     map[string]any `json:"data,omitempty"`
	}
	m := msg{ev.Seq, ev.Kind, ev.Source, ev.Priority.String(), ev.Message, ev.Data}
	b, err := json.Marshal(m)
	if err != nil { // a producer put a NaN or a channel in Data: keep the rest
		m.Data = map[string]any{"unencodable": err.Error()}
		b = marshal(m)
	}
	return b
}

// boxes adds an image-annotation message for an event that carries motion
// boxes (motion_start, motion_update), drawn as line loops over the frame.
func (e *encoder) boxes(dst []Message, ev *worldmodel.Event, t time.Time, seq uint64) []Message {
	boxes := boxesOf(ev.Data["boxes"])
	if len(boxes) == 0 {
		return dst
	}
	type point struct {
		X float64 `json:"x"`
		Y float64 `json:"y"`
	}
	type color struct {
		R float64 `json:"r"`
		G float64 `json:"g"`
		B float64 `json:"b"`
		A float64 `json:"a"`
	}
	type stamp struct {
		Sec  int64 `json:"sec"`
		Nsec int64 `json:"nsec"`
	}
	type shape struct {
		Timestamp     stamp   `json:"timestamp"`
		Type          int     `json:"type"`
		Points        []point `json:"points"`
		OutlineColor  color   `json:"outline_color"`
		OutlineColors []color `json:"outline_colors"`
		FillColor     color   `json:"fill_color"`
		Thickness     float64 `json:"thickness"`
	}
	ts := stamp{t.Unix(), int64(t.Nanosecond())}
	shapes := make([]shape, len(boxes))
	for i, b := range boxes {
		x0, y0, x1, y1 := b[0], b[1], b[2], b[3]
		shapes[i] = shape{Timestamp: ts, Type: 2, // line loop
			Points:       []point{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}},
			OutlineColor: color{1, 0.2, 0.2, 1}, OutlineColors: []color{}, Thickness: 2}
	}
	data := marshal(struct {
		Circles []struct{} `json:"circles"`
		Points  []shape    `json:"points"`
		Texts   []struct{} `json:"texts"`
	}{[]struct{}{}, shapes, []struct{}{}})
	return append(dst, Message{Topic: annotationTopic(ev.Source), Schema: SchemaAnnotations, Kind: KindAnnotations,
		Source: ev.Source, Time: t, Seq: seq, Data: data})
}

// boxesOf reads motion boxes as the camera raises them ([][4]int) or as
// they come back from JSON ([]any of []any numbers).
func boxesOf(v any) [][4]float64 {
	var out [][4]float64
	switch bs := v.(type) {
	case [][4]int:
		for _, b := range bs {
			out = append(out, [4]float64{float64(b[0]), float64(b[1]), float64(b[2]), float64(b[3])})
		}
	case []any:
		for _, b := range bs {
			nums, ok := b.([]any)
			if !ok || len(nums) != 4 {
				continue
			}
			var box [4]float64
			ok = true
			for i, n := range nums {
				f, isNum := n.(float64)
				ok = ok && isNum
				box[i] = f
			}
			if ok {
				out = append(out, box)
			}
		}
	}
	return out
}

// marshal encodes a message struct; the structs above hold only plain
// values and event data, which producers keep JSON-encodable. What cannot
// be encoded still leaves a valid message saying so.
func marshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"error":"unencodable"}`)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

func appendStamp(b []byte, t time.Time) []byte {
	b = append(b, `{"sec":`...)
	b = strconv.AppendInt(b, t.Unix(), 10)
	b = append(b, `,"nsec":`...)
	b = strconv.AppendInt(b, int64(t.Nanosecond()), 10)
	return append(b, '}')
}
