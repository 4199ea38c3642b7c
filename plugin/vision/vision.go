// Package vision is the camera.describe skill: the camera's latest
// snapshot goes to the board's multimodal model (llm.vision_model, e.g.
// moondream, qwen2.5vl:3b, gemma3:4b, through Ollama's chat "images") with
// a question, and the short answer becomes both the reply and the text
// observation <camera>.description, so later decisions can use "a person
// is at the door". It is a compiled-in plugin named "vision":
//
//	llm:
//	  vision_model: moondream
//	plugins:
//	  vision:
//	    timeout: 60s          # one answer: seconds on a Pi 5 (moondream), tens of seconds on a Pi 4
//	    max_tokens: 120
//	    structured: true      # also ask for {objects: [{label, confidence}]} (Ollama "format")
//	    min_confidence: 0.5   # objects at or above it raise events <camera>/<label>
//	    event_priority: normal
//	    on_motion:            # describe the moving region after each motion start (off: each costs seconds)
//	      enabled: false
//	      min_interval: 60s   # per camera
//	      question: ""
//
// With structured answers each object found raises an event whose kind is
// its label and whose source is the camera, so a reflex says
// `on: front_cam/person`. A model that ignores the schema still answers:
// its text is kept and no object is trusted.
//
// Without a camera, without the LLM, or without llm.vision_model the
// plugin declines (the skill is absent, and `edgeagent check` logs why)
// rather than failing at call time.
package vision

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/plugin/cameras"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// toolName is the skill this plugin brings.
const toolName = "camera.describe"

func init() { plugin.Register("vision", New) }

// Options is the plugins.vision block.
type Options struct {
	Timeout       time.Duration `yaml:"timeout"`
	MaxTokens     int           `yaml:"max_tokens"`
	Structured    bool          `yaml:"structured"`
	MinConfidence float64       `yaml:"min_confidence"`
	EventPriority string        `yaml:"event_priority"`
	OnMotion      OnMotion      `yaml:"on_motion"`
}

// OnMotion describes the scene after motion starts.
type OnMotion struct {
	Enabled     bool          `yaml:"enabled"`
	MinInterval time.Duration `yaml:"min_interval"`
	Question    string        `yaml:"question"`
}

// Plugin is the vision plugin.
type Plugin struct {
	o       Options
	cameras cameras.Set
	model   llm.LLM
	client  *local.Client
	name    string // the model's name
	prio    worldmodel.Priority
	world   world
	raise   func(worldmodel.Event)
	clock   clock.Clock
	log     *slog.Logger

	mu       sync.Mutex
	lastAuto map[string]time.Time // on_motion: last description per camera
	busy     bool                 // on_motion: one description at a time
	workers  plugin.Workers       // the on-motion watch and its descriptions
}

// world is the world model as the plugin uses it: a camera's latest frame
// to describe, the description it adds, the exchange with the model in the
// journal, and the stream it watches for motion (on_motion).
type world interface {
	Latest(source string) (worldmodel.Observation, bool)
	Append(worldmodel.Observation) uint64
	Note(worldmodel.Record) worldmodel.Record
	NewCursor(fromStart bool) *worldmodel.Cursor
}

// New builds the plugin; it declines when the board cannot describe
// images.
func New(h plugin.Host) (hooks.Plugin, error) {
	b := h.Board()
	cams := cameras.Of(h)
	switch {
	case len(cams) == 0:
		return nil, hooks.DeclineTools("no camera on this board: camera.describe is absent", toolName)
	case !b.LLM.Enabled:
		return nil, hooks.DeclineTools("llm.enabled is false: camera.describe is absent", toolName)
	case b.LLM.VisionModel == "":
		return nil, hooks.DeclineTools("no llm.vision_model in the board (e.g. moondream, qwen2.5vl:3b): camera.describe is absent", toolName)
	}
	o := Options{Timeout: 60 * time.Second, MaxTokens: 120, Structured: true, MinConfidence: 0.5, EventPriority: "normal",
		OnMotion: OnMotion{MinInterval: time.Minute}}
	if err := b.Plugins["vision"].Decode(&o); err != nil {
		return nil, err
	}
	prio, err := validate(o)
	if err != nil {
		return nil, err
	}
	c, err := local.New(local.Options{Host: b.LLM.Host, Model: b.LLM.VisionModel, NumCtx: b.LLM.NumCtx, Seed: b.LLM.Seed,
		Temperature: b.LLM.Temperature, KeepAlive: b.LLM.KeepAlive, Timeout: o.Timeout, MaxTokens: o.MaxTokens,
		Log: h.Log().With("plugin", "vision")})
	if err != nil {
		return nil, err
	}
	return &Plugin{o: o, cameras: cams, model: c, client: c, name: b.LLM.VisionModel, prio: prio, world: h.World(),
		raise: h.Raise, clock: h.Clock(), log: h.Log().With("plugin", "vision"), lastAuto: map[string]time.Time{}}, nil
}

func validate(o Options) (worldmodel.Priority, error) {
	var errs []error
	if o.Timeout < time.Second {
		errs = append(errs, errors.New("plugins.vision.timeout: at least 1s"))
	}
	if o.MaxTokens < 8 || o.MaxTokens > 2048 {
		errs = append(errs, errors.New("plugins.vision.max_tokens: 8..2048"))
	}
	if o.MinConfidence < 0 || o.MinConfidence > 1 {
		errs = append(errs, errors.New("plugins.vision.min_confidence: 0..1"))
	}
	if o.OnMotion.MinInterval < time.Second {
		errs = append(errs, errors.New("plugins.vision.on_motion.min_interval: at least 1s (a description costs seconds)"))
	}
	prio, err := worldmodel.ParsePriority(o.EventPriority)
	if err != nil {
		errs = append(errs, fmt.Errorf("plugins.vision.event_priority: %w", err))
	}
	return prio, errors.Join(errs...)
}

// Info implements hooks.Plugin.
func (p *Plugin) Info() hooks.Info {
	return hooks.Info{Name: "vision", Version: "1", Description: "camera.describe: what a camera sees, by " + p.name}
}

// Status is the vision model's client state.
func (p *Plugin) Status() any { return p.client.Status() }

type params struct {
	Camera   string `json:"camera"`
	Question string `json:"question"`
}

// Tools implements tools.Provider.
func (p *Plugin) Tools() []tools.Tool {
	spec := p.cameras.Spec(toolName,
		"Look through a camera and say what is there, or answer a question about it (is someone at the door? "+
			"what is on the table?). Takes seconds. The answer is also remembered as <camera>.description.",
		`"question": {"type": "string", "maxLength": 300, "description": "what to ask about the picture; by default: what is in front of the camera"}`,
		".snapshot", ".description")
	return []tools.Tool{tools.Typed(spec, func(ctx context.Context, a params) (tools.Result, error) {
		d, err := p.Describe(ctx, a.Camera, a.Question)
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Value: d, Notes: d.notes}, nil
	})}
}

// OnAgentStart starts the on-motion watch when the board asks for it.
func (p *Plugin) OnAgentStart(context.Context) error {
	if !p.o.OnMotion.Enabled {
		return nil
	}
	p.workers.Start()
	cur := p.world.NewCursor(false)
	p.workers.Go(func(ctx context.Context) { p.watchMotion(ctx, cur) })
	return nil
}

// OnAgentStop ends the watch and a description in flight.
func (p *Plugin) OnAgentStop(context.Context) error {
	p.workers.Stop()
	p.client.Close()
	return nil
}

// watchMotion describes a camera's scene after its motion starts, at most
// once per min_interval per camera and one at a time: on a Pi a
// description costs seconds of the CPU the rest of the agent needs.
func (p *Plugin) watchMotion(ctx context.Context, cur *worldmodel.Cursor) {
	cur.Follow(ctx, func(it worldmodel.Item) {
		if it.Kind != worldmodel.ItemEvent || it.Event.Kind != "motion_start" || !slices.Contains(p.cameras, it.Event.Source) {
			return
		}
		cam, now, ev := it.Event.Source, p.clock.Now(), it.Event
		p.mu.Lock()
		due := !p.busy && (p.lastAuto[cam].IsZero() || now.Sub(p.lastAuto[cam]) >= p.o.OnMotion.MinInterval)
		if due {
			p.busy, p.lastAuto[cam] = true, now
		}
		p.mu.Unlock()
		if !due {
			return
		}
		idle := func() { p.mu.Lock(); p.busy = false; p.mu.Unlock() }
		if !p.workers.Go(func(ctx context.Context) {
			defer idle()
			source, _ := ev.Data["snapshot"].(string)
			if source != cam+".motion_snapshot" {
				source = "" // only the camera's own frames
			}
			if _, err := p.describe(ctx, cam, p.o.OnMotion.Question, source, motionRegion(ev.Data)); err != nil && ctx.Err() == nil {
				p.log.Warn("describing the motion failed", "camera", cam, "err", err)
			}
		}) {
			idle() // the agent stops: no description
		}
	})
}
