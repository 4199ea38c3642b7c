// Package board is the schema of one board file: the YAML that says which
// robot this is, how it talks MQTT and to the local LLM, and which sensors,
// actuators and reflexes it has. Adding a sensor is a change to this file,
// not to code, so the loader is strict: every unknown key, wrong type,
// duplicate name or pin, out-of-range I2C address, bad duration or pin that
// does not exist on the board is reported at once, each with file:line:col
// and its key path, before any hardware is touched.
//
// Defaults are filled in at load time and kept in the Config, so what
// Marshal prints (`edgeagent check --print`) is exactly what runs.
//
// The package knows the shape of sensor and actuator blocks but not the
// kinds: kind-specific settings stay in an Options block that the kind
// decodes itself, with the same strictness and positions, and what an
// actuator kind takes (pins, limits, defaults, initial) is asked of the
// registered kinds (UseActuatorKinds).
package board

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Config is one board, defaults filled. The yaml keys are the file format;
// docs/config.md describes each one (a test keeps the two in step).
type Config struct {
	Device      Device      `yaml:"device"`
	DataDir     string      `yaml:"data_dir"` // absolute after loading
	Log         Log         `yaml:"log"`
	MQTT        MQTT        `yaml:"mqtt"`
	LLM         LLM         `yaml:"llm"`
	Agent       Agent       `yaml:"agent"`
	World       World       `yaml:"world"`
	Permissions Permissions `yaml:"permissions"`
	Fleet       Fleet       `yaml:"fleet,omitempty"`
	// Sensor and actuator names share one namespace: both become prefixes of
	// world-model sources and tool names.
	Sensors   []Sensor   `yaml:"sensors"`
	Actuators []Actuator `yaml:"actuators"`
	Reflexes  []Reflex   `yaml:"reflexes"`
	// Plugins holds each plugin's settings by plugin name, decoded by the
	// plugin when it is loaded.
	Plugins map[string]Options `yaml:"plugins,omitempty"`
	// Record configures the recorder (MCAP files); the record package
	// decodes it.
	Record Options `yaml:"record,omitempty"`
	// Dashboard configures the web dashboard (listen address, users,
	// TLS); the dashboard package decodes it.
	Dashboard Options `yaml:"dashboard,omitempty"`

	// src is where each key was written, for KeyError.
	src *positions
	// opts is where the Options blocks come from.
	opts *optionSource
}

// positions are where a parsed file's keys were written.
type positions struct {
	file  string
	where map[string]pos
}

// KeyError reports a problem found after loading (a reflex naming a tool no
// plugin registered) as an *Error at the key's position in the board file,
// in the same "file:line:col: path: msg" form as the loading errors. A key
// that is not written is reported at its nearest written parent.
func (c *Config) KeyError(path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if c.src == nil { // built in code, not parsed
		return fmt.Errorf("%s: %s", path, msg)
	}
	p := (&decoder{where: c.src.where}).at(path)
	return &Error{File: c.src.file, Line: p.line, Col: p.col, Path: path, Msg: msg}
}

// Device says which robot this is and which pin table applies.
type Device struct {
	// ID names the device on MQTT and in Home Assistant; [a-z0-9_-]+ so it
	// is safe in topics and file names.
	ID string `yaml:"id"`
	// Platform picks the gobot adaptor: raspi, jetson or sim.
	Platform string `yaml:"platform"`
	// Model picks the header pin and I2C bus table: rpi4, rpi5,
	// jetson-orin-nano, jetson-nano. Required for raspi and jetson because
	// the I2C bus numbers differ between Jetson models; unused for sim.
	Model string `yaml:"model"`
	// Name is the human-readable name shown in Home Assistant (default: ID).
	Name string `yaml:"name"`
}

// Log configures log/slog.
type Log struct {
	Level  string `yaml:"level"`  // debug | info | warn | error
	Format string `yaml:"format"` // text | json
}

// MQTT is the control plane: which broker, under which topic prefix, and
// what the embedded broker lets in.
type MQTT struct {
	// Broker is "embedded" (an in-process broker, the sim default) or the
	// URL of an external one: tcp://host:port or ssl://host:port.
	Broker string `yaml:"broker"`
	// Listen is the embedded broker's address. Anything but loopback
	// requires Users, so a robot is never an open broker on the LAN.
	Listen string `yaml:"listen,omitempty"`
	// Prefix is prepended to every topic; it ends with "/".
	Prefix       string        `yaml:"prefix"`
	ClientID     string        `yaml:"client_id"`
	Username     string        `yaml:"username,omitempty"`
	Password     string        `yaml:"password,omitempty"`
	PasswordFile string        `yaml:"password_file,omitempty"` // read at connect time; keeps the secret out of the board file
	Users        []MQTTUser    `yaml:"users,omitempty"`
	TLS          TLS           `yaml:"tls,omitempty"`
	QoS          int           `yaml:"qos"`
	KeepAlive    time.Duration `yaml:"keepalive"`
	// Buffer is how many outbound messages are kept while disconnected
	// (oldest dropped first).
	Buffer    int       `yaml:"buffer"`
	Discovery Discovery `yaml:"discovery"`
	// PublishAllow lists the topic filters (MQTT wildcards allowed) the
	// mqtt_publish skill may publish to; empty means nowhere.
	PublishAllow []string `yaml:"publish_allow"`
	// LocalAdmin lets every local process use the admin topic of the
	// embedded broker when it has no users: an explicit opt-in, since any
	// program on the robot could then reload the config or reset an e-stop.
	LocalAdmin bool `yaml:"local_admin,omitempty"`
}

// DialURL is where a client on this machine reaches the broker: the
// embedded one on its listen address (an unspecified host dialled as
// loopback), or the external URL.
func (m MQTT) DialURL() string {
	if m.Broker != "embedded" {
		return m.Broker
	}
	host, port, err := net.SplitHostPort(m.Listen)
	if err != nil {
		return "tcp://" + m.Listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "tcp://" + net.JoinHostPort(host, port)
}

// MQTTUser is an account on the embedded broker. Only the bcrypt hash is
// stored so a board file can be shared without leaking the password.
type MQTTUser struct {
	Username       string `yaml:"username"`
	PasswordBcrypt string `yaml:"password_bcrypt"`
	Admin          bool   `yaml:"admin"` // may use the admin commands (tool enable/disable, reload, …)
}

// TLS holds PEM file paths, relative to the board file or absolute.
type TLS struct {
	CA   string `yaml:"ca,omitempty"`
	Cert string `yaml:"cert,omitempty"`
	Key  string `yaml:"key,omitempty"`
}

// Discovery controls Home Assistant MQTT discovery.
type Discovery struct {
	Enabled bool   `yaml:"enabled"`
	Prefix  string `yaml:"prefix"`
}

// LLM configures the local model (Ollama) and the five-step decision engine.
type LLM struct {
	Enabled bool `yaml:"enabled"`
	// Host is Ollama's address. Empty means $OLLAMA_HOST at run time, else
	// http://127.0.0.1:11434; the llm package resolves it, so a board file
	// can move between machines.
	Host string `yaml:"host"`
	// Model answers the structured calls (scenario, intent, parameters).
	Model string `yaml:"model"`
	// EmbedModel ranks tools by similarity; empty selects the built-in
	// lexical embedder, which needs no model at all.
	EmbedModel string `yaml:"embed_model"`
	// VisionModel answers camera.describe (a multimodal model such as
	// moondream or qwen2.5vl:3b); empty: the robot does not describe images.
	VisionModel string  `yaml:"vision_model,omitempty"`
	NumCtx      int     `yaml:"num_ctx"`
	Seed        int     `yaml:"seed"`        // fixed so the same situation gives the same decision
	Temperature float64 `yaml:"temperature"` // 0: deterministic
	// KeepAlive is how long Ollama keeps the model loaded; negative keeps it
	// loaded for good, which avoids a multi-second reload on a Pi.
	KeepAlive time.Duration `yaml:"keep_alive"`
	Timeout   time.Duration `yaml:"timeout"` // per call
	// Scenarios is the classification enum of step 1; actuator scenario tags
	// must come from this list.
	Scenarios []string `yaml:"scenarios"`
	Weights   Weights  `yaml:"weights"`
	TopK      int      `yaml:"top_k"` // candidates kept after the similarity match
	// MinSimilarity drops candidates below this cosine similarity.
	MinSimilarity float64 `yaml:"min_similarity"`
	// PlanBelow: when the best candidate scores below this, the engine
	// plans several steps instead of calling one tool.
	PlanBelow    float64 `yaml:"plan_below"`
	SummaryBytes int     `yaml:"summary_bytes"` // world summary budget in prompts
}

// Weights of the candidate evaluation (step 4); they sum to 1.
type Weights struct {
	Semantic   float64 `yaml:"semantic"`
	History    float64 `yaml:"history"`
	Permission float64 `yaml:"permission"`
	Context    float64 `yaml:"context"`
}

// Agent configures the sense-plan-act loop.
type Agent struct {
	Heartbeat    time.Duration `yaml:"heartbeat"`     // a cycle runs at least this often
	Queue        int           `yaml:"queue"`         // interrupt bus capacity
	CycleTimeout time.Duration `yaml:"cycle_timeout"` // a cycle is cancelled after this
	// GCPercent is the Go garbage collector's target (debug.SetGCPercent):
	// the heap may grow this many percent over the live data before a
	// collection. Lower trades a little CPU for a smaller RSS on a small
	// board (measured: 25 saves ~3 MB on the sim board for ~1 % more CPU;
	// docs/bench/footprint.md). The GOGC environment variable, when set, wins.
	GCPercent int    `yaml:"gc_percent"`
	Goals     []Goal `yaml:"goals,omitempty"`
}

// Goal is a motive: when a world-model source passes a bound, the agent
// perceives Text as if someone had said it, and decides what to do.
type Goal struct {
	Name   string   `yaml:"name"`
	Source string   `yaml:"source"`          // world-model source, e.g. "env.temperature"
	Above  *float64 `yaml:"above,omitempty"` // fires when the value rises above
	Below  *float64 `yaml:"below,omitempty"` // fires when the value falls below
	Text   string   `yaml:"text"`
}

// World sizes the world model. Every ring is bounded so memory stays flat
// however long the robot runs.
type World struct {
	DefaultCapacity int `yaml:"default_capacity"` // readings kept per source
	// Horizon is how far back each source's history must reach: a ring
	// grows towards its capacity only while its oldest reading is younger,
	// so a slow sensor keeps one horizon of readings instead of
	// filling its capacity (and the RSS) over hours. The event log and
	// the journal grow the same way past their first 128 entries. The
	// dashboard plots dashboard.history of it.
	Horizon       time.Duration `yaml:"horizon"`
	MaxSources    int           `yaml:"max_sources"`
	Events        int           `yaml:"events"`         // event log length
	SummaryEvents int           `yaml:"summary_events"` // recent events in the LLM summary
	// Capacities overrides DefaultCapacity per source, e.g. fewer JPEG
	// snapshots: {"front_cam.snapshot": 2}.
	Capacities map[string]int `yaml:"capacities,omitempty"`
}

// Permissions says what each caller may do: a list of permission names
// granted to it ("*" grants all). Tools declare the permissions they need.
// The callers are fixed (a typo must not silently grant nothing).
type Permissions struct {
	CLI    []string `yaml:"cli"`
	MQTT   []string `yaml:"mqtt"`
	LLM    []string `yaml:"llm"`
	Reflex []string `yaml:"reflex"`
	Motive []string `yaml:"motive"`
}

// Of returns the grants of a caller ("cli", "mqtt", "llm", "reflex",
// "motive"); ok is false for an unknown caller.
func (p Permissions) Of(caller string) (grants []string, ok bool) {
	switch caller {
	case "cli":
		return p.CLI, true
	case "mqtt":
		return p.MQTT, true
	case "llm":
		return p.LLM, true
	case "reflex":
		return p.Reflex, true
	case "motive":
		return p.Motive, true
	}
	return nil, false
}

// Sensor is one sensor block. Kind selects the registered sensor kind; the
// common fields are here so that pins, buses and addresses can be checked
// for the whole board at once, and Options carries the rest.
type Sensor struct {
	// Name is [a-z][a-z0-9_]* and prefixes the sensor's world-model sources
	// ("env" -> "env.temperature").
	Name    string `yaml:"name"`
	Kind    string `yaml:"kind"` // registry key, checked by the sensors package
	Enabled bool   `yaml:"enabled"`
	// Interval between samples; 0 uses the kind's default.
	Interval time.Duration `yaml:"interval"`
	// Telemetry is how often readings are published on MQTT; 0 publishes
	// every reading.
	Telemetry time.Duration `yaml:"telemetry"`
	// Bus is the I2C bus ("1" on a Pi, "7" on a Jetson Orin Nano, "sim").
	// It defaults to the board's main header bus when Address is set.
	Bus     string `yaml:"bus,omitempty"`
	Address Addr   `yaml:"address,omitempty"` // 7-bit I2C address; 0: none
	// Pins maps a role of the kind ("signal", "trigger", "echo") to a header
	// pin.
	Pins map[string]string `yaml:"pins,omitempty"`
	// Priority of the events it raises: critical | high | normal | low;
	// empty uses the kind's default.
	Priority   string      `yaml:"priority,omitempty"`
	Thresholds []Threshold `yaml:"thresholds,omitempty"`
	Options    Options     `yaml:"options,omitempty"`
}

// Threshold raises an event when a reading crosses a bound. Exactly one of
// Above, Below and Change is set.
type Threshold struct {
	Quantity string   `yaml:"quantity"` // e.g. "temperature"
	Above    *float64 `yaml:"above,omitempty"`
	Below    *float64 `yaml:"below,omitempty"`
	Change   *float64 `yaml:"change,omitempty"` // absolute change since the last event
	// Hysteresis is how far back the value must come before the threshold
	// can fire again, so a value hovering at the bound does not flood.
	Hysteresis float64 `yaml:"hysteresis"`
	Priority   string  `yaml:"priority"` // default high (threshold alarms are High in DESIGN §4)
	Event      string  `yaml:"event"`    // event kind raised; default "threshold"
}

// Actuator is one actuator block; each becomes one or more tools named
// "<name>.<func>".
type Actuator struct {
	Name string `yaml:"name"` // [a-z][a-z0-9_]*
	// Kind is a registered actuator kind (docs/config.md lists the
	// built-in ones); what a kind takes is checked through ActuatorKind.
	Kind string `yaml:"kind"`
	// Pins by the roles the kind names ("pin"; "forward", "backward",
	// "pwm"); none for a kind on I2C.
	Pins    map[string]string `yaml:"pins,omitempty"`
	Bus     string            `yaml:"bus,omitempty"`     // I2C kinds only; default: the header's bus
	Address Addr              `yaml:"address,omitempty"` // I2C kinds only; default: the kind's
	Channel int               `yaml:"channel,omitempty"` // I2C kinds with channels: which output
	// Scenarios tag the tools for the decision engine; each must be one of
	// llm.scenarios.
	Scenarios  []string `yaml:"scenarios,omitempty"`
	Permission string   `yaml:"permission"` // needed to call its tools; default "actuate"
	// Limits are the safety envelope, enforced below every caller: the
	// keys every kind has (rate_limit, on_violation) and the kind's own
	// (min_angle …), kept as parsed YAML, like Options, until the kind
	// decodes them with its defaults; a key of another kind is an unknown
	// key at its file:line:col.
	Limits Options `yaml:"limits,omitempty"`
	// Initial is the state set at start, in the kind's words (on|off, an
	// angle, a duty, "stop"); empty leaves it.
	Initial string  `yaml:"initial,omitempty"`
	Options Options `yaml:"options,omitempty"`
}

// Reflex is a fast path: an event triggers a tool call with no LLM.
type Reflex struct {
	// On is "<kind>" (any source) or "<source>/<kind>", e.g. motion_start or
	// front_cam/motion_start.
	On       string        `yaml:"on"`
	Do       Call          `yaml:"do"`
	Cooldown time.Duration `yaml:"cooldown"` // minimum time between two firings
}

// Call is a tool invocation written in the board file.
type Call struct {
	Tool string `yaml:"tool"`
	// Params is any YAML mapping, as compact JSON with sorted keys; the
	// tool's JSON Schema validates it at invocation.
	Params json.RawMessage `yaml:"params"`
}

// Addr is a 7-bit I2C address. It reads an integer or a hex literal
// (0x76, or "0x76") and prints as hex, the way datasheets write it.
type Addr uint16

func (a Addr) String() string { return fmt.Sprintf("0x%02x", uint16(a)) }

// MarshalYAML prints the address as an unquoted hex literal.
func (a Addr) MarshalYAML() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads 0x76, 118 or 0o166.
func (a *Addr) UnmarshalText(b []byte) error {
	s := strings.ReplaceAll(string(b), "_", "")
	if strings.HasPrefix(s, "0o") || strings.HasPrefix(s, "0O") {
		s = "0" + s[2:]
	}
	v, err := strconv.ParseUint(s, 0, 16)
	if err != nil {
		return fmt.Errorf("expected an I2C address such as 0x76")
	}
	*a = Addr(v)
	return nil
}

// Load reads and parses a board file.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("board: %w", err)
	}
	return Parse(path, data)
}

// Parse parses a board file's content. filename is used in error messages
// and to resolve relative paths (data_dir, TLS files, password_file). All
// problems are returned together as *Error values joined by errors.Join,
// sorted by position; the Config is nil then.
func Parse(filename string, data []byte) (*Config, error) {
	body, anchors, err := parseDoc(filename, data)
	if err != nil {
		return nil, err
	}
	c := defaultConfig()
	d := newDecoder(filename, anchors)
	c.opts = &optionSource{file: filename, data: bytes.Clone(data), tree: &optionTree{blocks: map[string]ast.Node{}, anchors: anchors}}
	d.src, d.tree = c.opts, c.opts.tree
	if body != nil {
		d.decode(body, reflectValue(c), "")
	}
	// Validate even after decoding errors, so that one run reports every
	// mistake; a field that failed to decode keeps its default and the
	// validator stays quiet about it.
	d.validating = true
	v := &validator{decoder: d, c: c, file: filename, kinds: currentActuatorKinds()}
	v.fillDefaults()
	v.validate()
	if len(d.errs) > 0 {
		return nil, d.errs.join()
	}
	c.src = &positions{file: filename, where: d.where}
	return c, nil
}

// Marshal returns the effective configuration (defaults filled, paths
// resolved) as YAML; Parse of the result gives an equal Config. It prints
// secrets as they are in the file (prefer password_file).
func (c *Config) Marshal() ([]byte, error) {
	return yaml.MarshalWithOptions(c,
		yaml.Indent(2),
		yaml.IndentSequence(true),
		yaml.UseLiteralStyleIfMultiline(true),
		yaml.CustomMarshaler[json.RawMessage](func(m json.RawMessage) ([]byte, error) {
			if len(m) == 0 {
				return []byte("{}"), nil
			}
			return m, nil // JSON is YAML flow syntax
		}),
	)
}
