package mic

import (
	"errors"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
	"github.com/edgeagent/edgeagent/sensors/mic/vad"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Opts is the `options:` block of a mic sensor. The block is decoded over
// DefaultOpts, so it only names what it changes.
type Opts struct {
	// Source is the backend: malgo | exec | wav | sim.
	Source string `yaml:"source"`

	// Device picks the capture device (malgo) by its ID (hex, as
	// `edgeagent wakeword devices` lists them) or by name (exact, else a
	// unique substring). Empty: the system's default device — never "the
	// first one", which on a Pi is often a zero-sample HDMI placeholder.
	Device string `yaml:"device"`
	// Backends restricts miniaudio's backends, in order of preference
	// (alsa, pulseaudio, jack, null …). Empty: miniaudio's default order.
	Backends []string `yaml:"backends"`
	// Buffer is how much captured audio may wait for the pipeline (malgo)
	// before new audio is dropped, and counted, instead of blocking the
	// audio thread.
	Buffer time.Duration `yaml:"buffer"`

	// Command writes raw PCM to stdout (exec), e.g.
	// [arecord, -q, -D, default, -f, S16_LE, -r, "16000", -c, "1", -t, raw].
	Command []string `yaml:"command"`
	// Format of the command's output (exec): rate, channels, encoding
	// (s16le | s24le | s32le | f32le | u8). Anything is converted to
	// 16 kHz mono.
	Format FormatOpts `yaml:"format"`

	// File is a WAV file to replay (wav), relative to the board file.
	File string `yaml:"file"`
	// Pace replays files and the simulator in real time (false: as fast as
	// the pipeline goes, for tests).
	Pace bool `yaml:"pace"`
	// Loop replays the file forever.
	Loop bool `yaml:"loop"`

	Sim SimOpts `yaml:"sim"`

	// LoudDBFS raises loud_noise when a block's peak reaches this level;
	// 0 disables the event.
	LoudDBFS float64 `yaml:"loud_dbfs"`
	// LoudPriority is loud_noise's priority (a bang near a robot is worth
	// an interrupt; in a workshop it is not).
	LoudPriority string `yaml:"loud_priority"`
	// LoudCooldown suppresses repeats of loud_noise.
	LoudCooldown time.Duration `yaml:"loud_cooldown"`

	VAD      VADOpts      `yaml:"vad"`
	WakeWord WakeWordOpts `yaml:"wakeword"`
	STT      STTOpts      `yaml:"stt"`
	// HalfDuplex keeps the robot's own voice from waking it.
	HalfDuplex HalfDuplexOpts `yaml:"half_duplex"`

	// Reconnect is the backoff between attempts to reopen a failed source
	// (USB microphone unplugged, command exited).
	Reconnect sensors.Backoff `yaml:"reconnect"`
}

// FormatOpts describes raw PCM.
type FormatOpts struct {
	Rate     int    `yaml:"rate"`
	Channels int    `yaml:"channels"`
	Encoding string `yaml:"encoding"`
}

// SimOpts scripts the simulated soundscape.
type SimOpts struct {
	// Noise is the background: white | pink | none.
	Noise string `yaml:"noise"`
	// NoiseDBFS is the background's RMS level.
	NoiseDBFS float64 `yaml:"noise_dbfs"`
	// Period repeats the script; 0 plays it once, then background only.
	Period time.Duration `yaml:"period"`
	// Utterances are WAV files mixed in at given times in each period.
	Utterances []UtteranceOpts `yaml:"utterances"`
	Seed       uint64          `yaml:"seed"`
}

// UtteranceOpts is one clip of the simulated soundscape.
type UtteranceOpts struct {
	File   string        `yaml:"file"` // relative to the board file
	At     time.Duration `yaml:"at"`   // offset into the period
	GainDB float64       `yaml:"gain_db"`
}

// VADOpts tune the voice activity detector (see package vad).
type VADOpts struct {
	OnsetDB   float64       `yaml:"onset_db"`
	Hangover  time.Duration `yaml:"hangover"`
	QuietDBFS float64       `yaml:"quiet_dbfs"`
}

// WakeWordOpts configure wake-word detection.
type WakeWordOpts struct {
	// Detector: builtin (the trained head of Model), wyoming (a server
	// such as wyoming-openwakeword, with the built-in detector as the
	// fallback when it is unreachable), or off.
	Detector string `yaml:"detector"`
	// Model is a trained, speaker-independent head (a NAME.eawh file made
	// by `edgeagent wakeword train`, relative to the board file), "builtin"
	// for the shipped "hey robot" head (the default), or "none" (the VAD
	// alone: levels and speech, no wake word).
	Model string `yaml:"model"`
	// ModelThreshold on the head's score, 0..1. Default: the head's own,
	// chosen by its trainer on speakers it never trained on.
	ModelThreshold float64 `yaml:"model_threshold"`
	// Refractory is the dead time after a detection.
	Refractory time.Duration `yaml:"refractory"`
	// Wyoming is the wake server's address (host:port or tcp://host:port).
	Wyoming string `yaml:"wyoming"`
	// WyomingNames are the server's wake words to listen for (e.g.
	// [ok_nabu]); empty: whatever the server detects by default.
	WyomingNames []string `yaml:"wyoming_names"`
}

// enrolmentRemoved is why the enrolment keys are refused.
const enrolmentRemoved = "enrolled templates were removed (they woke the robot on near misses such as \"hey robin\": docs/bench/wake-word.md); delete the key: the trained head (wakeword.model) hears any voice"

// RetiredKeys implements board.Retired: the keys of enrolled templates,
// which the wake word no longer has, fail a board that names them.
func (*WakeWordOpts) RetiredKeys() map[string]string {
	return map[string]string{
		"templates": enrolmentRemoved,
		"names":     enrolmentRemoved,
		"threshold": enrolmentRemoved + "; the head's threshold is wakeword.model_threshold",
	}
}

// Special values of WakeWordOpts.Model.
const (
	ModelBuiltin = "builtin" // the shipped model (wakeword.Builtin)
	ModelNone    = "none"
)

// HalfDuplexOpts say what the wake-word detector does while the robot's
// speaker plays (see package duplex) and for Tail after: mute ignores every
// wake word (only an e-stop interrupts the robot), raise accepts only
// built-in detections scoring at least Threshold (a person close to the
// robot barges in; the robot's own voice, a different voice, scores lower),
// off changes nothing.
type HalfDuplexOpts struct {
	Mode      string        `yaml:"mode"`
	Tail      time.Duration `yaml:"tail"`
	Threshold float64       `yaml:"threshold"`
}

// STTOpts configure what happens after a wake word: the following speech is
// captured until the speaker stops, and transcribed.
type STTOpts struct {
	// Wyoming is the speech-to-text server (e.g. wyoming-faster-whisper on
	// port 10300). Empty: no transcription; the wake_word event says so.
	Wyoming  string `yaml:"wyoming"`
	Model    string `yaml:"model"`
	Language string `yaml:"language"`
	// EndSilence ends the command: this much silence after speech.
	EndSilence time.Duration `yaml:"end_silence"`
	// MaxCommand bounds the capture.
	MaxCommand time.Duration `yaml:"max_command"`
	// NoSpeechTimeout gives up when nobody speaks after the wake word.
	NoSpeechTimeout time.Duration `yaml:"no_speech_timeout"`
	// Timeout bounds the wait for the transcript.
	Timeout time.Duration `yaml:"timeout"`
}

// DefaultOpts are the options of an empty block.
func DefaultOpts() Opts {
	return Opts{
		Source:       "malgo",
		Buffer:       2 * time.Second,
		Format:       FormatOpts{Rate: 16000, Channels: 1, Encoding: "s16le"},
		Pace:         true,
		Sim:          SimOpts{Noise: "pink", NoiseDBFS: -55, Period: 30 * time.Second, Seed: 1},
		LoudDBFS:     -3,
		LoudPriority: "high",
		LoudCooldown: 2 * time.Second,
		WakeWord: WakeWordOpts{
			Detector:   "builtin",
			Model:      ModelBuiltin,
			Refractory: 1500 * time.Millisecond,
		},
		STT: STTOpts{
			EndSilence:      800 * time.Millisecond,
			MaxCommand:      8 * time.Second,
			NoSpeechTimeout: 4 * time.Second,
			Timeout:         15 * time.Second,
		},
		HalfDuplex: HalfDuplexOpts{Mode: "mute", Tail: 300 * time.Millisecond, Threshold: 0.95},
		Reconnect:  sensors.Backoff{Initial: time.Second, Max: 30 * time.Second},
	}
}

// DecodeOpts decodes and checks a mic block's options.
func DecodeOpts(cfg sensors.Config) (Opts, error) {
	o := DefaultOpts()
	if err := cfg.DecodeOptions(&o); err != nil {
		return o, err
	}
	if err := o.validate(cfg); err != nil {
		return o, errors.Join(sensors.Under("options", err)...)
	}
	return o, nil
}

func (o *Opts) validate(cfg sensors.Config) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	switch o.Source {
	case "malgo":
	case "exec":
		if len(o.Command) == 0 {
			bad("command: source exec needs one")
		}
		if _, err := o.format(); err != nil {
			bad("format.%v", err)
		}
	case "wav":
		if o.File == "" {
			bad("file: source wav needs one")
		} else if f, err := cfg.File(o.File); err != nil {
			bad("file: %v", err)
		} else {
			o.File = f
		}
	case "sim":
		switch o.Sim.Noise {
		case "white", "pink", "none":
		default:
			bad("sim.noise: want white, pink or none")
		}
		for i := range o.Sim.Utterances {
			u := &o.Sim.Utterances[i]
			if u.File == "" {
				bad("sim.utterances[%d].file: required", i)
			} else if f, err := cfg.File(u.File); err != nil {
				bad("sim.utterances[%d].file: %v", i, err)
			} else {
				u.File = f
			}
			if u.At < 0 || (o.Sim.Period > 0 && u.At >= o.Sim.Period) {
				bad("sim.utterances[%d].at: want 0 ≤ at < sim.period", i)
			}
		}
	default:
		bad("source: want malgo, exec, wav or sim")
	}
	if _, err := worldmodel.ParsePriority(o.LoudPriority); err != nil {
		bad("loud_priority: %v", err)
	}
	if o.LoudDBFS > 0 {
		bad("loud_dbfs: levels are at most 0 dBFS")
	}
	if o.Buffer < 100*time.Millisecond {
		bad("buffer: want at least 100ms")
	}
	switch o.WakeWord.Detector {
	case "builtin", "off":
	case "wyoming":
		if o.WakeWord.Wyoming == "" {
			bad("wakeword.wyoming: wakeword.detector wyoming needs it (host:port of e.g. wyoming-openwakeword)")
		}
	default:
		bad("wakeword.detector: want builtin, wyoming or off")
	}
	if t := o.WakeWord.ModelThreshold; t < 0 || t >= 1 {
		bad("wakeword.model_threshold: want 0..1 (0: the head's own)")
	}
	switch o.WakeWord.Model {
	case "":
		o.WakeWord.Model = ModelBuiltin
	case ModelBuiltin, ModelNone:
	default:
		if f, err := cfg.File(o.WakeWord.Model); err != nil {
			bad("wakeword.model: %v", err)
		} else {
			o.WakeWord.Model = f
		}
	}
	if o.STT.EndSilence < 200*time.Millisecond || o.STT.MaxCommand < time.Second || o.STT.NoSpeechTimeout <= 0 || o.STT.Timeout <= 0 {
		bad("stt: want end_silence ≥ 200ms, max_command ≥ 1s, no_speech_timeout and timeout > 0")
	}
	switch h := o.HalfDuplex; {
	case h.Mode != "mute" && h.Mode != "raise" && h.Mode != "off":
		bad("half_duplex.mode: want mute, raise or off")
	case h.Tail < 0 || h.Tail > 5*time.Second:
		bad("half_duplex.tail: want 0..5s")
	case h.Threshold <= 0 || h.Threshold > 1:
		bad("half_duplex.threshold: want 0..1")
	}
	return errors.Join(errs...)
}

func (o *Opts) format() (audio.Format, error) {
	e, err := audio.ParseEncoding(o.Format.Encoding)
	if err != nil {
		return audio.Format{}, err
	}
	f := audio.Format{Rate: o.Format.Rate, Channels: o.Format.Channels, Encoding: e}
	return f, f.Validate()
}

// VADOptions are the VAD settings of the block.
func (o Opts) VADOptions() vad.Options {
	return vad.Options{OnsetDB: o.VAD.OnsetDB, Hangover: o.VAD.Hangover, QuietDBFS: o.VAD.QuietDBFS}
}
