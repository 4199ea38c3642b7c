package vision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Description is camera.describe's answer.
type Description struct {
	Camera   string   `json:"camera"`
	Question string   `json:"question"`
	Answer   string   `json:"answer"`
	Objects  []Object `json:"objects,omitempty"`
	Model    string   `json:"model"`
	Seconds  float64  `json:"seconds"`     // the model's time
	ImageAge float64  `json:"image_age_s"` // how old the snapshot was
	notes    []string
}

// Object is one thing the model says it sees.
type Object struct {
	Label      string  `json:"label"`
	Confidence float64 `json:"confidence"`
}

const system = "You are the eyes of a small robot. Look at the picture from its camera and answer in one or two short sentences, plainly, " +
	"as you would say it out loud. Say only what you can see."

const defaultQuestion = "What is in front of the camera?"

// answerSchema is the structured answer: the spoken text and the objects.
const answerSchema = `{
  "type": "object",
  "properties": {
    "answer": {"type": "string", "minLength": 1, "maxLength": 600},
    "objects": {"type": "array", "maxItems": 20, "items": {
      "type": "object",
      "properties": {"label": {"type": "string", "minLength": 1, "maxLength": 40}, "confidence": {"type": "number", "minimum": 0, "maximum": 1}},
      "required": ["label", "confidence"]
    }}
  },
  "required": ["answer", "objects"]
}`

// compiled is the answer's schema, compiled at the first answer rather
// than at start-up, which every process paid for whether or not the board
// has a vision model.
var compiled = sync.OnceValue(func() *jsonschema.Schema {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(answerSchema))
	if err != nil {
		panic(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("answer.json", doc); err != nil {
		panic(err)
	}
	return c.MustCompile("answer.json")
})

// Describe asks the vision model about cam's latest snapshot, records the
// answer as <cam>.description and raises an event per object found.
func (p *Plugin) Describe(ctx context.Context, cam, question string) (Description, error) {
	return p.describe(ctx, cam, question, "", nil)
}

// describe is Describe of the picture in source (default
// <cam>.snapshot), cropped to region (fractions of the frame) when given.
func (p *Plugin) describe(ctx context.Context, cam, question, source string, region *image.Rectangle) (Description, error) {
	cam, err := p.cameras.Pick(cam)
	if err != nil {
		return Description{}, err
	}
	if source == "" {
		source = cam + ".snapshot"
	}
	o, ok := p.world.Latest(source)
	if !ok || o.Blob == nil || len(o.Blob.Data) == 0 {
		return Description{}, fmt.Errorf("%s has no snapshot yet (is it running, with snapshot_interval > 0?)", cam)
	}
	img := o.Blob
	var notes []string
	if region != nil {
		cropped, ok, err := crop(img.Data, *region)
		if err != nil {
			return Description{}, err
		}
		if ok {
			img = &worldmodel.Blob{MIME: "image/jpeg", Data: cropped}
			notes = append(notes, "cropped to the motion region")
		}
	}
	q := strings.TrimSpace(question)
	if q == "" {
		q = defaultQuestion
	}
	req := llm.Request{Purpose: "describe", System: system, MaxTokens: p.o.MaxTokens,
		Messages: []llm.Message{{Role: "user", Content: q}}, Images: [][]byte{img.Data}}
	if p.o.Structured {
		req.Schema = json.RawMessage(answerSchema)
		req.Messages[0].Content += " Answer as JSON: \"answer\" is your sentence; \"objects\" lists what you see " +
			"(label: one lowercase word such as person, car, dog, cat, package; confidence from 0 to 1)."
	}
	start := p.clock.Now()
	res, err := p.model.Generate(ctx, req)
	took := p.clock.Now().Sub(start)
	p.journal(cam, req, img, res, err, took)
	if err != nil {
		return Description{}, err
	}
	d := Description{Camera: cam, Question: q, Model: p.name, Seconds: math.Round(took.Seconds()*100) / 100,
		ImageAge: math.Round(start.Sub(o.Time).Seconds()*10) / 10, notes: notes}
	if p.o.Structured {
		d.Answer, d.Objects, err = parse(res.Content)
		if err != nil {
			// The model ignored the schema: keep its words, trust no
			// object.
			d.Answer = strings.TrimSpace(res.Content)
			d.notes = append(d.notes, "the model did not answer in the requested structure ("+err.Error()+"): no objects")
		}
	} else {
		d.Answer = strings.TrimSpace(res.Content)
	}
	if d.Answer == "" {
		return Description{}, errors.New("the vision model gave an empty answer")
	}
	now := p.clock.Now()
	p.world.Append(worldmodel.Observation{Time: now, Source: cam + ".description", Kind: worldmodel.Text, Text: d.Answer})
	for _, obj := range d.Objects {
		if obj.Confidence < p.o.MinConfidence {
			continue
		}
		p.raise(worldmodel.Event{Time: now, Kind: obj.Label, Source: cam, Priority: p.prio,
			Message: fmt.Sprintf("%s sees a %s (%.0f%%)", cam, obj.Label, obj.Confidence*100),
			Data:    map[string]any{"label": obj.Label, "confidence": obj.Confidence, "model": p.name, "answer": d.Answer}})
	}
	return d, nil
}

var labelRE = regexp.MustCompile(`[^a-z0-9_]+`)

// parse validates a structured answer and normalises its labels into
// event kinds ("Delivery Truck" → delivery_truck).
func parse(content string) (string, []Object, error) {
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(content))
	if err != nil {
		return "", nil, errors.New("not JSON")
	}
	if err := compiled().Validate(inst); err != nil {
		return "", nil, errors.New("does not match the schema")
	}
	var a struct {
		Answer  string   `json:"answer"`
		Objects []Object `json:"objects"`
	}
	if err := json.Unmarshal([]byte(content), &a); err != nil {
		return "", nil, err
	}
	var objs []Object
	for _, o := range a.Objects {
		l := strings.Trim(labelRE.ReplaceAllString(strings.ToLower(strings.TrimSpace(o.Label)), "_"), "_")
		if l == "" || l[0] < 'a' || l[0] > 'z' {
			continue
		}
		objs = append(objs, Object{Label: l, Confidence: o.Confidence})
	}
	return strings.TrimSpace(a.Answer), objs, nil
}

// exchange is the Data of the "llm" record of a description: the prompt
// and the raw answer, the image by size (its bytes are in the world model
// already).
type exchange struct {
	Purpose  string          `json:"purpose"`
	Model    string          `json:"model"`
	Camera   string          `json:"camera"`
	System   string          `json:"system"`
	Messages []llm.Message   `json:"messages"`
	Images   []string        `json:"images"`
	Schema   json.RawMessage `json:"schema,omitempty"`
	Answer   string          `json:"answer"`
	Error    string          `json:"error,omitempty"`
	Usage    llm.Usage       `json:"usage"`
	Duration float64         `json:"duration_ms"`
}

func (p *Plugin) journal(cam string, req llm.Request, img *worldmodel.Blob, res llm.Response, err error, took time.Duration) {
	x := exchange{Purpose: req.Purpose, Model: p.name, Camera: cam, System: req.System, Messages: req.Messages,
		Images: []string{fmt.Sprintf("%s, %d bytes", img.MIME, len(img.Data))}, Schema: req.Schema,
		Answer: res.Content, Usage: res.Usage, Duration: float64(took.Microseconds()) / 1000}
	if err != nil {
		x.Error = err.Error()
	}
	if data, merr := json.Marshal(x); merr == nil {
		p.world.Note(worldmodel.Record{Kind: "llm", Source: "vision", Data: data})
	}
}
