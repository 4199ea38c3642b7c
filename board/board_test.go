package board

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var shipped = []string{"sim", "rpi4", "rpi5", "jetson-orin-nano"}

func TestShippedBoardsLoad(t *testing.T) {
	for _, name := range shipped {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "board-configs", name+".yaml")
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Actuators) == 0 {
				t.Error("no actuators")
			}
			kinds := map[string]bool{}
			for _, s := range c.Sensors {
				kinds[s.Kind] = true
			}
			for _, k := range []string{"camera", "mic", "bme280", "pir", "estop"} {
				if !kinds[k] {
					t.Errorf("no %s sensor: every shipped board shows the full sensor set", k)
				}
			}
			src, _ := os.ReadFile(path)
			if strings.Count(string(src), "#") < 10 {
				t.Error("a shipped board file should explain itself in comments")
			}
		})
	}
}

func TestSimBoard(t *testing.T) {
	c, err := Load("../board-configs/sim.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Device.Platform != "sim" || c.MQTT.Broker != "embedded" || c.Agent.Heartbeat != 10*time.Second {
		t.Errorf("device %+v, broker %q, heartbeat %v", c.Device, c.MQTT.Broker, c.Agent.Heartbeat)
	}
	byName := map[string]Actuator{}
	for _, a := range c.Actuators {
		byName[a.Name] = a
	}
	if a := byName["headlight"]; a.Kind != "led" || a.Pins["pin"] != "sim:12" {
		t.Errorf("headlight: %+v", a)
	}
	pan := byName["pan"]
	// The limits are the kind's to decode: the board keeps them as written.
	var limits struct {
		MinAngle    float64 `yaml:"min_angle"`
		MaxAngle    float64 `yaml:"max_angle"`
		MaxRate     float64 `yaml:"max_rate"`
		OnViolation string  `yaml:"on_violation"`
	}
	if err := pan.Limits.Decode(&limits); err != nil || pan.Kind != "servo" || pan.Pins["pin"] != "sim:13" ||
		limits.MinAngle != 0 || limits.MaxAngle != 180 || limits.MaxRate != 90 || limits.OnViolation != "clamp" {
		t.Errorf("pan: %+v, limits %+v (%v)", pan, limits, err)
	}
	if byName["drive"].Kind != "motor" || byName["pump"].Kind != "relay" {
		t.Errorf("drive/pump: %+v %+v", byName["drive"], byName["pump"])
	}
	if len(c.Reflexes) != 1 || c.Reflexes[0].On != "motion_start" || c.Reflexes[0].Do.Tool != "headlight.set" || string(c.Reflexes[0].Do.Params) != `{"on":true}` {
		t.Errorf("reflexes: %+v", c.Reflexes)
	}
}

func TestDefaults(t *testing.T) {
	t.Setenv("HOME", "/home/pi")
	t.Setenv("XDG_STATE_HOME", "")
	src := `
device: {id: bot, platform: raspi, model: rpi4}
sensors:
  - {name: env, kind: bme280, address: 0x76}
  - name: cam
    kind: camera
    thresholds: [{quantity: brightness, below: 10}]
actuators:
  - {name: pan, kind: pca9685_servo}
  - {name: wheel, kind: motor, pins: {forward: "29", backward: "31", pwm: "33"}}
  - {name: fan, kind: pwm, pins: {pin: "12"}}
reflexes:
  - {on: motion_start, do: {tool: pan.set_angle}}
permissions:
  mqtt: [read]
`
	c, err := Parse("/etc/edgeagent/bot.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %#v, want %#v", what, got, want)
		}
	}
	check("device.name", c.Device.Name, "bot")
	check("data_dir", c.DataDir, "/home/pi/.local/state/edgeagent/bot")
	check("log", c.Log, Log{Level: "info", Format: "text"})
	check("mqtt.broker", c.MQTT.Broker, "embedded")
	check("mqtt.listen", c.MQTT.Listen, "127.0.0.1:1883")
	check("mqtt.prefix", c.MQTT.Prefix, "edgeagent/bot/")
	check("mqtt.client_id", c.MQTT.ClientID, "edgeagent-bot")
	check("mqtt.qos", c.MQTT.QoS, 1)
	check("mqtt.keepalive", c.MQTT.KeepAlive, 30*time.Second)
	check("mqtt.buffer", c.MQTT.Buffer, 1000)
	check("mqtt.discovery", c.MQTT.Discovery, Discovery{Enabled: true, Prefix: "homeassistant"})
	check("llm.host", c.LLM.Host, "")
	check("llm.model", c.LLM.Model, "qwen2.5:1.5b")
	check("llm.embed_model", c.LLM.EmbedModel, "all-minilm")
	check("llm.keep_alive", c.LLM.KeepAlive, -time.Second)
	check("llm.weights", c.LLM.Weights, Weights{0.4, 0.3, 0.2, 0.1})
	check("llm.scenarios", c.LLM.Scenarios, []string{"security", "navigation", "environment", "interaction", "maintenance", "idle"})
	check("agent", c.Agent, Agent{Heartbeat: 10 * time.Second, Queue: 64, CycleTimeout: 30 * time.Second, GCPercent: 100})
	check("world", c.World, World{DefaultCapacity: 256, Horizon: 10 * time.Minute, MaxSources: 512, Events: 1024, SummaryEvents: 10})
	// Mentioning one caller keeps the defaults of the others.
	check("permissions.mqtt", c.Permissions.MQTT, []string{"read"})
	check("permissions.cli", c.Permissions.CLI, []string{"*"})
	check("permissions.reflex", c.Permissions.Reflex, []string{"read", "actuate"})

	env, cam := c.Sensors[0], c.Sensors[1]
	check("sensors[0].enabled", env.Enabled, true)
	check("sensors[0].telemetry", env.Telemetry, 10*time.Second)
	check("sensors[0].bus", env.Bus, "1") // the Pi's pins 3/5
	check("sensors[1].bus", cam.Bus, "")  // no address: not on I2C
	check("sensors[1].thresholds[0]", cam.Thresholds[0].Priority+"/"+cam.Thresholds[0].Event, "high/threshold")

	// The actuator kinds' defaults (PCA9685 address and bus) are checked in
	// plugin/actuators, where the kinds are; the limits are the kinds' own.
	check("actuators[0].permission", c.Actuators[0].Permission, "actuate")
	check("reflexes[0].params", string(c.Reflexes[0].Do.Params), "{}")
}

func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	src := "device: {id: bot, platform: sim}\ndata_dir: state\nmqtt: {broker: \"ssl://h:8883\", tls: {ca: certs/ca.pem}}\n"
	c, err := Parse(filepath.Join(dir, "bot.yaml"), []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(dir, "state"); c.DataDir != want {
		t.Errorf("data_dir = %s, want %s", c.DataDir, want)
	}
	if want := filepath.Join(dir, "certs", "ca.pem"); c.MQTT.TLS.CA != want {
		t.Errorf("tls.ca = %s, want %s", c.MQTT.TLS.CA, want)
	}
	if c.MQTT.Listen != "" {
		t.Errorf("listen = %q for an external broker", c.MQTT.Listen)
	}
}

// everything exercises every part of the schema, for the round trip.
const everything = `
device: {id: lab-1, platform: jetson, model: jetson-orin-nano, name: Lab robot}
data_dir: /var/lib/edgeagent
log: {level: debug, format: json}
mqtt:
  broker: embedded
  listen: 0.0.0.0:1883
  prefix: lab/1/
  users:
    - {username: ha, password_bcrypt: "$2y$10$abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0", admin: true}
  tls: {cert: /etc/ssl/a.pem, key: /etc/ssl/a.key}
  qos: 0
  keepalive: 1m
  publish_allow: [lab/+/notes, "lab/#"]
llm:
  host: http://gpu:11434
  embed_model: ""
  temperature: 0.3
  keep_alive: 5m
  scenarios: [security, idle]
  weights: {semantic: 0.5, history: 0.2, permission: 0.2, context: 0.1}
agent:
  goals:
    - {name: cool_down, source: env.temperature, above: 30, text: it is too hot}
    - {name: band, source: env.humidity, above: 70, below: 30, text: humidity out of range}
world:
  capacities: {"front_cam.snapshot": 2, env.temperature: 1000}
sensors:
  - name: env
    kind: bme280
    enabled: false
    interval: 2s
    telemetry: 0s
    bus: "7"
    address: 0x76
    priority: normal
    thresholds:
      - {quantity: temperature, above: 30.5, hysteresis: 0.5, priority: critical, event: overheat}
      - {quantity: pressure, change: 5}
    options: {mode: forced, filter: [2, 4], nested: {a: 1, b: "x"}}
  - {name: pir, kind: pir, pins: {signal: "11"}, priority: high}
actuators:
  - {name: pan, kind: pca9685_servo, channel: 3, scenarios: [security], limits: &slow {max_rate: 60, on_violation: clamp}, initial: "90"}
  - {name: tilt, kind: pca9685_servo, channel: 4, limits: {<<: *slow, min_angle: 20}}
  - {name: lamp, kind: led, pins: {pin: "31"}, permission: light, limits: {rate_limit: 2.5}, initial: "on", options: {active_low: true}}
reflexes:
  - on: pir/motion_start
    do: {tool: lamp.set, params: {on: true, level: 0.5, tags: [a, b], deep: {x: null}}}
    cooldown: 1500ms
plugins:
  notes: {path: /tmp/notes, max: 10}
  empty: {}
`

func TestMarshalRoundTrip(t *testing.T) {
	inputs := map[string][]byte{"everything": []byte(everything)}
	for _, name := range shipped {
		b, err := os.ReadFile(filepath.Join("..", "board-configs", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		inputs[name] = b
	}
	for name, src := range inputs {
		t.Run(name, func(t *testing.T) {
			c1, err := Parse(name+".yaml", src)
			if err != nil {
				t.Fatal(err)
			}
			out, err := c1.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			c2, err := Parse("printed.yaml", out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if diff := configDiff(c1, c2); diff != "" {
				t.Errorf("round trip changed the config: %s\n%s", diff, out)
			}
			out2, _ := c2.Marshal()
			if string(out) != string(out2) {
				t.Errorf("Marshal is not stable:\n%s\n---\n%s", out, out2)
			}
		})
	}
}

// configDiff compares two configs; Options are compared by content (their
// positions and file names differ by design).
func configDiff(a, b *Config) string {
	ca, cb := *a, *b
	strip := func(c *Config) (opts []any) {
		c.Sensors = append([]Sensor(nil), c.Sensors...)
		c.Actuators = append([]Actuator(nil), c.Actuators...)
		for i := range c.Sensors {
			opts = append(opts, optionsValue(c.Sensors[i].Options))
			c.Sensors[i].Options = Options{}
		}
		for i := range c.Actuators {
			opts = append(opts, optionsValue(c.Actuators[i].Options), optionsValue(c.Actuators[i].Limits))
			c.Actuators[i].Options, c.Actuators[i].Limits = Options{}, Options{}
		}
		plugins := map[string]any{}
		for k, o := range c.Plugins {
			plugins[k] = optionsValue(o)
		}
		c.Plugins = nil
		opts = append(opts, optionsValue(c.Record), optionsValue(c.Dashboard))
		c.Record, c.Dashboard = Options{}, Options{}
		return append(opts, plugins)
	}
	ca.src, cb.src = nil, nil   // positions differ between the file and its print
	ca.opts, cb.opts = nil, nil // and so do the files the blocks come from
	oa, ob := strip(&ca), strip(&cb)
	if !reflect.DeepEqual(ca, cb) {
		ja, _ := json.MarshalIndent(ca, "", " ")
		jb, _ := json.MarshalIndent(cb, "", " ")
		return "fields differ:\n" + string(ja) + "\n---\n" + string(jb)
	}
	if !reflect.DeepEqual(oa, ob) {
		return "options differ"
	}
	return ""
}

func optionsValue(o Options) any {
	if o.IsZero() {
		return nil
	}
	var v any
	if err := o.Decode(&v); err != nil {
		return err.Error()
	}
	return v
}

func TestAllErrorsSortedByPosition(t *testing.T) {
	src := `device: {id: t, platform: sim}
actuators:
  - {name: b, kind: led, pins: {pin: x}, scenarios: [maybe]}
sensors:
  - {name: a, kind: pir, priority: soon}
  - {name: a, kind: pir, interval: 5 s}
agent:
  queue: lots
`
	_, err := Parse("t.yaml", []byte(src))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`t.yaml:3:54: actuators[0].scenarios[0]:`,
		`t.yaml:5:36: sensors[0].priority:`,
		`t.yaml:6:12: sensors[1].name: this name is taken`,
		`t.yaml:6:36: sensors[1].interval: not a duration`,
		`t.yaml:8:10: agent.queue: expected an integer`,
	}
	wantErrors(t, err, want)
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != len(want) {
		t.Errorf("errors are not individually reachable: %T", err)
	}
}

// wantErrors checks that err lists one error a line, in order, each
// starting with its want.
func wantErrors(t *testing.T, err error, want []string) {
	t.Helper()
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(lines), len(want), err)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s…", i, lines[i], want[i])
		}
	}
}

func TestDecodeErrorsAreNotRepeatedByValidation(t *testing.T) {
	// device.id fails to decode; "device.id: required" would only repeat it.
	_, err := Parse("t.yaml", []byte("device: {id: [x], platform: sim}\n"))
	if err == nil || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), "device.id: expected a string") {
		t.Errorf("got %v", err)
	}
}

func TestAddr(t *testing.T) {
	for in, want := range map[string]Addr{"address: 0x76": 0x76, "address: 118": 0x76, `address: "0x48"`: 0x48, "address: 0o166": 0x76} {
		c, err := Parse("t.yaml", []byte("device: {id: t, platform: sim}\nsensors:\n  - {name: s, kind: k, "+in+"}\n"))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if got := c.Sensors[0].Address; got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	if s := Addr(0x48).String(); s != "0x48" {
		t.Errorf("String() = %s", s)
	}
}

func TestPermissionsOf(t *testing.T) {
	p := defaultConfig().Permissions
	if g, ok := p.Of("reflex"); !ok || !reflect.DeepEqual(g, []string{"read", "actuate"}) {
		t.Errorf("reflex: %v %v", g, ok)
	}
	if _, ok := p.Of("nobody"); ok {
		t.Error("unknown caller accepted")
	}
}

func TestLoadMissingFile(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml")); err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v", err)
	}
}

func TestEmptyFile(t *testing.T) {
	_, err := Parse("t.yaml", nil)
	if err == nil || !strings.Contains(err.Error(), "t.yaml:1:1: device.id: required") {
		t.Errorf("got %v", err)
	}
}

func TestRecursiveAliasIsAnError(t *testing.T) {
	for name, src := range map[string]string{
		"recursive": "device: {id: t, platform: sim}\nworld: &w {capacities: *w}\n",
		"laughs":    "device: {id: t, platform: sim}\nplugins:\n  a: &a {x: [1,2,3,4,5,6,7,8,9,10]}\n  b: &b {x: [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]}\n  c: &c {x: [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]}\n  d: &d {x: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]}\n  e: &e {x: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]}\n  f: &f {x: [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]}\n  g: &g {x: [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]}\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(src))
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range shipped {
		if b, err := os.ReadFile(filepath.Join("..", "board-configs", name+".yaml")); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(everything))
	for _, m := range mistakes {
		f.Add([]byte(m.src))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse("f.yaml", data)
		if err != nil {
			var be *Error
			if !errors.As(err, &be) {
				t.Fatalf("error without position: %v", err)
			}
			return
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		if _, err := Parse("printed.yaml", out); err != nil {
			t.Fatalf("printed config does not parse: %v\n%s", err, out)
		}
	})
}

func TestI2CPinsAreGPIOWhileTheBusIsUnused(t *testing.T) {
	// On a Pi, pins 3/5 are plain GPIO until some block uses bus 1.
	src := "device: {id: t, platform: raspi, model: rpi4}\nactuators:\n  - {name: led, kind: led, pins: {pin: \"3\"}}\n"
	if _, err := Parse("t.yaml", []byte(src)); err != nil {
		t.Error(err)
	}
}

func TestDefaultBusPerModel(t *testing.T) {
	for model, want := range map[string]string{"rpi4": "1", "rpi5": "1", "jetson-orin-nano": "7", "jetson-nano": "1"} {
		platform := "raspi"
		if strings.HasPrefix(model, "jetson") {
			platform = "jetson"
		}
		src := "device: {id: t, platform: " + platform + ", model: " + model + "}\nsensors:\n  - {name: env, kind: bme280, address: 0x76}\n"
		c, err := Parse("t.yaml", []byte(src))
		if err != nil {
			t.Errorf("%s: %v", model, err)
			continue
		}
		if got := c.Sensors[0].Bus; got != want {
			t.Errorf("%s: default bus %q, want %q", model, got, want)
		}
	}
}

func TestParamsJSON(t *testing.T) {
	src := "device: {id: t, platform: sim}\nreflexes:\n  - {on: m, do: {tool: x.say, params: {text: \"a<b\", n: 3, f: 0.5, l: [true, null], z: {}}}}\n"
	c, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(c.Reflexes[0].Do.Params), `{"f":0.5,"l":[true,null],"n":3,"text":"a<b","z":{}}`; got != want {
		t.Errorf("params = %s, want %s", got, want)
	}
}

func TestGCPercentBounds(t *testing.T) {
	_, err := Parse("gc.yaml", []byte("device: {id: x, platform: sim}\nagent:\n  gc_percent: 5\n"))
	if err == nil || !strings.Contains(err.Error(), "gc.yaml:3:15: agent.gc_percent: want 10–1000") {
		t.Fatalf("%v", err)
	}
}
