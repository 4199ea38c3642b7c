// Package say is the robot's voice: the speaker.say skill, spoken replies
// to voice commands, half-duplex with the microphone and barge-in. It is a
// compiled-in plugin named "say", loaded when the board has a plugins.say
// block and its programs (espeak-ng, aplay) are installed — otherwise it
// declines and `edgeagent check` logs why:
//
//	plugins:
//	  say:
//	    engine: exec                 # exec | wyoming
//	    command: [espeak-ng, --stdout]   # exec: text on stdin, WAV on stdout (or raw s16le mono at raw_rate)
//	    voice_flag: "-v"             # how the command takes a voice ("" : it takes none)
//	    raw_rate: 0                  # piper --output_raw: 22050
//	    wyoming: ""                  # engine wyoming: e.g. tcp://127.0.0.1:10200 (wyoming-piper)
//	    voice: ""                    # default voice: en-us+m3 (espeak-ng), en_US-lessac-medium (piper)
//	    volume: 1.0                  # 0..1
//	    sink: exec                   # exec | sim; default sim on the sim platform
//	    player: [aplay, -q, -t, raw, -f, S16_LE, -r, "16000", -c, "1"]
//	    mic: ""                      # the microphone kept deaf to our voice (default: the board's first mic)
//	    replies: true                # speak the outcome of voice commands
//	    max_text: 400                # characters per utterance
//
// Speech goes one way, like everything in the agent: text in, sound out.
// The skill never imports a sensor driver; it meets the microphone only
// on a duplex.Line, named after the mic sensor, which it holds while it
// plays so the wake-word detector ignores the robot's own voice.
//
// Barge-in: a wake word heard while the robot speaks (half_duplex mode
// raise on the mic), and any Critical event (e-stop), stop the speech at
// once. A new utterance replaces the one playing.
//
// Spoken replies: after a cycle triggered by a voice_command event, one
// short sentence per outcome ("OK, headlight set on.", "env temperature is
// 22.4 degrees.", "Sorry, I can't: the e-stop is latched."). Commands over
// MQTT stay silent.
package say

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/sensors/mic/duplex"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

const toolName = "speaker.say"

// micKind is the microphone sensor kind, spelled out: a skill does not
// import a sensor driver.
const micKind = "mic"

func init() { plugin.Register("say", New) }

// Options is the plugins.say block.
type Options struct {
	Enabled   *bool    `yaml:"enabled"`
	Engine    string   `yaml:"engine"`
	Command   []string `yaml:"command"`
	VoiceFlag *string  `yaml:"voice_flag"`
	RawRate   int      `yaml:"raw_rate"`
	Wyoming   string   `yaml:"wyoming"`
	Voice     string   `yaml:"voice"`
	Volume    *float64 `yaml:"volume"`
	Sink      string   `yaml:"sink"`
	Player    []string `yaml:"player"`
	Mic       string   `yaml:"mic"`
	Replies   *bool    `yaml:"replies"`
	MaxText   int      `yaml:"max_text"`
}

// stream is the world model's stream, which the barge-in watch follows for
// wake words.
type stream interface {
	NewCursor(fromStart bool) *worldmodel.Cursor
}

// Plugin is the say plugin.
type Plugin struct {
	speaker *Speaker
	sim     *SimSink // the sim sink, when that is the sink
	world   stream
	log     *slog.Logger
	voice   string
	volume  float64
	maxText int
	replies bool

	mu      sync.Mutex
	cycles  map[uint64]*voiceCycle // voice-command cycles in flight
	workers plugin.Workers         // the barge-in watch and the spoken replies
}

type voiceCycle struct{ results []hooks.ActionResult }

// maxCycles bounds the voice cycles tracked at once; a cycle whose
// reflect hook never came (cannot happen, but memory must stay flat) is
// dropped with the oldest.
const maxCycles = 16

// New builds the plugin; it declines without a plugins.say block.
func New(h plugin.Host) (hooks.Plugin, error) {
	b := h.Board()
	block, ok := b.Plugins["say"]
	if !ok {
		return nil, hooks.DeclineTools("no plugins.say block in the board: the robot does not speak", toolName)
	}
	o := Options{Engine: "exec", Command: []string{"espeak-ng", "--stdout"}, MaxText: 400}
	if err := block.Decode(&o); err != nil {
		return nil, err
	}
	if o.Enabled != nil && !*o.Enabled {
		return nil, hooks.DeclineTools("disabled in plugins.say.enabled", toolName)
	}
	p := &Plugin{world: h.World(), log: h.Log().With("plugin", "say"), voice: o.Voice, volume: 1,
		maxText: o.MaxText, replies: o.Replies == nil || *o.Replies, cycles: map[uint64]*voiceCycle{}}
	var errs []error
	if o.Volume != nil {
		p.volume = *o.Volume
		if p.volume <= 0 || p.volume > 1 {
			errs = append(errs, errors.New("plugins.say.volume: want (0, 1]"))
		}
	}
	if o.MaxText < 1 || o.MaxText > 5000 {
		errs = append(errs, errors.New("plugins.say.max_text: 1..5000"))
	}
	engine, err := newEngine(o)
	if err != nil {
		errs = append(errs, err)
	}
	line, err := micLine(b, o.Mic)
	if err != nil {
		errs = append(errs, err)
	}
	var sink Sink
	switch o.Sink {
	case "sim", "":
		if o.Sink == "" && b.Device.Platform != "sim" {
			sink = &ExecSink{Command: or(o.Player, DefaultPlayer)}
			break
		}
		p.sim = &SimSink{Clock: h.Clock(), Air: line}
		sink = p.sim
	case "exec":
		sink = &ExecSink{Command: or(o.Player, DefaultPlayer)}
	default:
		errs = append(errs, errors.New("plugins.say.sink: want exec or sim"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// A missing program is a missing part of the robot, like a missing
	// camera: the skill is absent and check says why, rather than every
	// reply failing.
	if missing := missingProgram(engine, sink); missing != "" {
		return nil, hooks.DeclineTools(missing, toolName)
	}
	p.speaker = &Speaker{Engine: engine, Sink: sink, Line: line, Clock: h.Clock(), Log: p.log}
	return p, nil
}

func newEngine(o Options) (Engine, error) {
	switch o.Engine {
	case "exec":
		if len(o.Command) == 0 || o.Command[0] == "" {
			return nil, errors.New("plugins.say.command: the synthesiser to run, e.g. [espeak-ng, --stdout]")
		}
		if o.RawRate != 0 && (o.RawRate < 4000 || o.RawRate > 192000) {
			return nil, errors.New("plugins.say.raw_rate: 4000..192000 Hz, or 0 for WAV output")
		}
		flag := "-v"
		if o.VoiceFlag != nil {
			flag = *o.VoiceFlag
		}
		return &ExecEngine{Command: o.Command, VoiceFlag: flag, RawRate: o.RawRate}, nil
	case "wyoming":
		if o.Wyoming == "" {
			return nil, errors.New("plugins.say.wyoming: the TTS server, e.g. tcp://127.0.0.1:10200 (wyoming-piper)")
		}
		return &WyomingEngine{Addr: o.Wyoming}, nil
	}
	return nil, errors.New("plugins.say.engine: want exec or wyoming")
}

// micLine is the duplex line of the named microphone, or of the board's
// first one; nil on a board without a microphone.
func micLine(b *board.Config, name string) (*duplex.Line, error) {
	for _, s := range b.Sensors {
		if s.Kind == micKind && s.Enabled && (name == "" || s.Name == name) {
			return duplex.Get(s.Name), nil
		}
	}
	if name != "" {
		return nil, errors.New("plugins.say.mic: names no enabled mic sensor")
	}
	return nil, nil
}

func missingProgram(e Engine, s Sink) string {
	var cmds [][]string
	if ee, ok := e.(*ExecEngine); ok {
		cmds = append(cmds, ee.Command)
	}
	if es, ok := s.(*ExecSink); ok {
		cmds = append(cmds, es.Command)
	}
	for _, c := range cmds {
		if _, err := exec.LookPath(c[0]); err != nil {
			return fmt.Sprintf("plugins.say: %s is not installed (apt-get install %s): the robot does not speak", c[0], debianPackage(c[0]))
		}
	}
	return ""
}

// debianPackage names the package of the usual programs.
func debianPackage(prog string) string {
	switch filepath.Base(prog) {
	case "aplay":
		return "alsa-utils"
	case "paplay":
		return "pulseaudio-utils"
	}
	return filepath.Base(prog)
}

func or(a, b []string) []string {
	if len(a) > 0 {
		return a
	}
	return b
}

// Info implements hooks.Plugin.
func (p *Plugin) Info() hooks.Info {
	return hooks.Info{Name: "say", Version: "1", Description: "speaker.say, spoken replies to voice commands, half-duplex and barge-in (" + p.speaker.Engine.String() + " → " + p.speaker.Sink.String() + ")"}
}

// Status is the say component of agent.status.
func (p *Plugin) Status() any {
	return map[string]any{"engine": p.speaker.Engine.String(), "sink": p.speaker.Sink.String(),
		"speaking": p.speaker.Speaking(), "half_duplex": p.speaker.Line != nil, "replies": p.replies}
}

// Speaker is the plugin's speaker (tests, benchmarks).
func (p *Plugin) Speaker() *Speaker { return p.speaker }

// Sim is the sim sink, or nil when the robot has a real speaker.
func (p *Plugin) Sim() *SimSink { return p.sim }

type sayParams struct {
	Text   string   `json:"text"`
	Voice  string   `json:"voice"`
	Volume *float64 `json:"volume"`
}

// Tools implements tools.Provider.
func (p *Plugin) Tools() []tools.Tool {
	spec := tools.Spec{
		Name:        toolName,
		Description: "Say something out loud through the robot's speaker. Returns once it has been said (or was interrupted).",
		Permission:  "actuate", // a sound in the room, granted like any other output
		Scenarios:   []string{"interaction"},
		Params: json.RawMessage(fmt.Sprintf(`{
  "type": "object",
  "properties": {
    "text": {"type": "string", "minLength": 1, "maxLength": %d, "description": "what to say"},
    "voice": {"type": "string", "maxLength": 64, "pattern": "^[A-Za-z0-9_+.:-]*$", "description": "the engine's voice name; the board's default when left out"},
    "volume": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "description": "0..1; the board's volume when left out"}
  },
  "required": ["text"],
  "additionalProperties": false
}`, p.maxText)),
	}
	return []tools.Tool{tools.Typed(spec, p.say)}
}

func (p *Plugin) say(ctx context.Context, a sayParams) (tools.Result, error) {
	text := strings.TrimSpace(a.Text)
	if text == "" {
		return tools.Result{}, errors.New("text: nothing to say")
	}
	voice, volume := p.voice, p.volume
	if a.Voice != "" {
		voice = a.Voice
	}
	if a.Volume != nil {
		volume = *a.Volume
	}
	rep, err := p.speaker.Say(ctx, text, voice, volume)
	out := map[string]any{"said": text, "seconds": float64(rep.Samples) / 16000, "first_audio_ms": rep.FirstAudio.Milliseconds()}
	if errors.Is(err, ErrInterrupted) {
		out["interrupted"] = err.Error()
		return tools.Result{Value: out, Notes: []string{"cut off: " + err.Error()}}, nil
	}
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Value: out}, nil
}
