package board

import (
	"errors"
	"strings"
	"testing"
)

// Each case is a whole board file with one mistake and the exact
// "file:line:col: path: message" prefix expected for it.
var mistakes = []struct {
	name string
	src  string
	want string
}{
	{"syntax", "device: {id: t, platform: sim\nlog: {}\n",
		`t.yaml:2:1: YAML syntax: ',' or '}' must be specified`},
	{"tab indentation", "device:\n\tid: t\n",
		`t.yaml:2:1: YAML syntax:`},
	{"second document", "device: {id: t, platform: sim}\n---\nlog: {}\n",
		`t.yaml:3:1: a board file holds one YAML document`},
	{"unknown top-level key", "device: {id: t, platform: sim}\ndevise: {}\n",
		`t.yaml:2:1: devise: unknown key (did you mean "device"?)`},
	{"unknown nested key", "device: {id: t, platform: sim}\nmqtt:\n  discovery:\n    enable: false\n",
		`t.yaml:4:5: mqtt.discovery.enable: unknown key (did you mean "enabled"?)`},
	{"unknown key in a list item", "device: {id: t, platform: sim}\nsensors:\n  - name: env\n    kind: bme280\n    thresholds:\n      - {quantity: temperature, above: 30, hysteresys: 1}\n",
		`t.yaml:6:44: sensors[0].thresholds[0].hysteresys: unknown key (did you mean "hysteresis"?)`},
	{"duplicate key", "device: {id: t, platform: sim}\nlog:\n  level: info\n  level: debug\n",
		`t.yaml:4:3: log.level: duplicate key (first at line 3)`},
	{"wrong type: int", "device: {id: t, platform: sim}\nagent:\n  queue: many\n",
		`t.yaml:3:10: agent.queue: expected an integer, got a string`},
	{"wrong type: bool", "device: {id: t, platform: sim}\nllm:\n  enabled: yes\n",
		`t.yaml:3:12: llm.enabled: expected true or false, got a string`},
	{"wrong type: list", "device: {id: t, platform: sim}\nllm:\n  scenarios: security\n",
		`t.yaml:3:14: llm.scenarios: expected a list, got a string`},
	{"wrong type: mapping", "device: {id: t, platform: sim}\nlog: [info]\n",
		`t.yaml:2:6: log: expected a mapping, got a list`},
	{"wrong type: string", "device: {id: t, platform: sim}\nsensors:\n  - name: {x: 1}\n    kind: pir\n",
		`t.yaml:3:11: sensors[0].name: expected a string, got a mapping`},
	{"integer overflow", "device: {id: t, platform: sim}\nactuators:\n  - {name: s, kind: pca9685_servo, channel: 99999999999999999999}\n",
		`t.yaml:3:45: actuators[0].channel: the number does not fit in int`},
	{"bad duration with a space", "device: {id: t, platform: sim}\nagent:\n  heartbeat: 5 s\n",
		`t.yaml:3:14: agent.heartbeat: not a duration`},
	{"duration without unit", "device: {id: t, platform: sim}\nagent:\n  heartbeat: 5\n",
		`t.yaml:3:14: agent.heartbeat: a duration needs a unit; write e.g. 2s, 500ms or 1m30s`},
	{"negative duration", "device: {id: t, platform: sim}\nagent:\n  heartbeat: -1s\n",
		`t.yaml:3:14: agent.heartbeat: must be positive`},
	{"negative cooldown", "device: {id: t, platform: sim}\nreflexes:\n  - on: motion_start\n    do: {tool: headlight.set}\n    cooldown: -1s\n",
		`t.yaml:5:15: reflexes[0].cooldown: must not be negative`},
	{"missing device id", "device: {platform: sim}\n",
		`t.yaml:1:1: device.id: required`},
	{"bad device id", "device: {id: Sim Bot, platform: sim}\n",
		`t.yaml:1:14: device.id: must match [a-z0-9_-]+ (it is used in MQTT topics and file names)`},
	{"unknown platform", "device: {id: t, platform: arduino}\n",
		`t.yaml:1:27: device.platform: want one of raspi, jetson, sim`},
	{"missing platform", "device:\n  id: t\n",
		`t.yaml:1:1: device.platform: required: one of raspi, jetson, sim`},
	{"missing model", "device: {id: t, platform: raspi}\n",
		`t.yaml:1:1: device.model: required for platform raspi: one of rpi4, rpi5`},
	{"model of another platform", "device: {id: t, platform: raspi, model: jetson-orin-nano}\n",
		`t.yaml:1:41: device.model: not a model of this platform; known: rpi4, rpi5`},
	{"unknown log level", "device: {id: t, platform: sim}\nlog: {level: verbose}\n",
		`t.yaml:2:14: log.level: want one of debug, info, warn, error`},
	{"duplicate sensor name", "device: {id: t, platform: sim}\nsensors:\n  - {name: env, kind: bme280}\n  - {name: env, kind: bh1750}\n",
		`t.yaml:4:12: sensors[1].name: this name is taken (first used by sensors[0] at line 3; sensors and actuators share names)`},
	{"sensor and actuator share names", "device: {id: t, platform: sim}\nsensors:\n  - {name: light, kind: bh1750}\nactuators:\n  - {name: light, kind: led, pins: {pin: a}}\n",
		`t.yaml:5:12: actuators[0].name: this name is taken (first used by sensors[0] at line 3; sensors and actuators share names)`},
	{"bad sensor name", "device: {id: t, platform: sim}\nsensors:\n  - {name: Env, kind: bme280}\n",
		`t.yaml:3:12: sensors[0].name: must match [a-z][a-z0-9_]* (it prefixes world-model sources and tool names)`},
	{"duplicate pin across sensor and actuator", "device: {id: t, platform: raspi, model: rpi4}\nsensors:\n  - {name: pir, kind: pir, pins: {signal: \"11\"}}\nactuators:\n  - {name: led, kind: led, pins: {pin: \"11\"}}\n",
		`t.yaml:5:40: actuators[0].pins.pin: this pin is already used by sensors[0].pins.signal (line 3)`},
	{"duplicate pin within a motor", "device: {id: t, platform: raspi, model: rpi4}\nactuators:\n  - name: drive\n    kind: motor\n    pins: {forward: \"29\", backward: \"29\", pwm: \"33\"}\n",
		`t.yaml:5:37: actuators[0].pins.backward: this pin is already used by actuators[0].pins.forward (line 5)`},
	{"power pin", "device: {id: t, platform: raspi, model: rpi4}\nactuators:\n  - {name: led, kind: led, pins: {pin: \"1\"}}\n",
		`t.yaml:3:40: actuators[0].pins.pin: not a GPIO pin of this board's header; GPIO pins: 3, 5, 7, 8, 10, 11, 12, 13, 15, 16, 18, 19, 21, 22, 23, 24, 26, 29, 31, 32, 33, 35, 36, 37, 38, 40`},
	{"BCM name instead of header pin", "device: {id: t, platform: raspi, model: rpi5}\nactuators:\n  - {name: led, kind: led, pins: {pin: GPIO17}}\n",
		`t.yaml:3:40: actuators[0].pins.pin: not a GPIO pin of this board's header (pins are physical header numbers as gobot uses them, e.g. "11", not GPIO/BCM names); GPIO pins: 3, 5, 7, 8, 10, 11, 12, 13, 15, 16, 18, 19, 21, 22, 23, 24, 26, 29, 31, 32, 33, 35, 36, 37, 38, 40`},
	{"jetson I2C pin as GPIO", "device: {id: t, platform: jetson, model: jetson-orin-nano}\nactuators:\n  - {name: led, kind: led, pins: {pin: \"27\"}}\n",
		`t.yaml:3:40: actuators[0].pins.pin: not a GPIO pin of this board's header; GPIO pins: 7, 11, 12, 13, 15, 16, 18, 19, 21, 22, 23, 24, 26, 29, 31, 32, 33, 35, 36, 37, 38, 40`},
	{"GPIO on an I2C bus in use", "device: {id: t, platform: raspi, model: rpi4}\nactuators:\n  - {name: led, kind: led, pins: {pin: \"3\"}}\nsensors:\n  - {name: env, kind: bme280, address: 0x76}\n",
		`t.yaml:3:40: actuators[0].pins.pin: this pin is the SDA line of I2C bus 1 (the header table), in use by sensors[0] (line 5); pick another GPIO pin`},
	{"address too high", "device: {id: t, platform: sim}\nsensors:\n  - {name: env, kind: bme280, address: 0x80}\n",
		`t.yaml:3:40: sensors[0].address: want 0x03–0x77 (7-bit addresses; the rest are reserved)`},
	{"address reserved low", "device: {id: t, platform: sim}\nsensors:\n  - {name: env, kind: bme280, bus: sim, address: 2}\n",
		`t.yaml:3:50: sensors[0].address: want 0x03–0x77 (7-bit addresses; the rest are reserved)`},
	{"address not a number", "device: {id: t, platform: sim}\nsensors:\n  - {name: env, kind: bme280, address: high}\n",
		`t.yaml:3:40: sensors[0].address: expected an I2C address such as 0x76`},
	{"duplicate bus and address", "device: {id: t, platform: raspi, model: rpi4}\nsensors:\n  - {name: env, kind: bme280, bus: \"1\", address: 0x76}\n  - {name: env2, kind: bmp280, address: 0x76}\n",
		`t.yaml:4:41: sensors[1].address: this bus and address are already used by sensors[0] (line 3)`},
	{"bus not on the board", "device: {id: t, platform: raspi, model: rpi4}\nsensors:\n  - {name: env, kind: bme280, bus: \"7\", address: 0x76}\n",
		`t.yaml:3:36: sensors[0].bus: not an I2C bus of this board's header; buses: 0 (pins 27/28), 1 (pins 3/5)`},
	{"sim bus name", "device: {id: t, platform: sim}\nsensors:\n  - {name: env, kind: bme280, bus: i2c, address: 0x76}\n",
		`t.yaml:3:36: sensors[0].bus: the sim platform has bus "sim" (or a number)`},
	{"unknown sensor priority", "device: {id: t, platform: sim}\nsensors:\n  - {name: pir, kind: pir, priority: urgent}\n",
		`t.yaml:3:38: sensors[0].priority: want one of critical, high, normal, low`},
	{"unknown threshold priority", "device: {id: t, platform: sim}\nsensors:\n  - name: env\n    kind: bme280\n    thresholds: [{quantity: temperature, above: 30, priority: urgent}]\n",
		`t.yaml:5:63: sensors[0].thresholds[0].priority: want one of critical, high, normal, low`},
	{"threshold with two bounds", "device: {id: t, platform: sim}\nsensors:\n  - name: env\n    kind: bme280\n    thresholds:\n      - quantity: temperature\n        above: 30\n        below: 5\n",
		`t.yaml:6:9: sensors[0].thresholds[0]: needs exactly one of above, below, change (found 2)`},
	{"reflex with empty tool", "device: {id: t, platform: sim}\nreflexes:\n  - on: motion_start\n    do: {tool: \"\"}\n",
		`t.yaml:4:16: reflexes[0].do.tool: required: the tool to call`},
	{"reflex without do", "device: {id: t, platform: sim}\nreflexes:\n  - on: motion_start\n",
		`t.yaml:3:5: reflexes[0].do.tool: required: the tool to call`},
	{"reflex on nonsense", "device: {id: t, platform: sim}\nreflexes:\n  - {on: a/b/c, do: {tool: x.y}}\n",
		`t.yaml:3:10: reflexes[0].on: expected <kind> or <source>/<kind>`},
	{"reflex params not a mapping", "device: {id: t, platform: sim}\nreflexes:\n  - {on: m, do: {tool: x.y, params: [1]}}\n",
		`t.yaml:3:37: reflexes[0].do.params: expected a mapping, got a list`},
	{"scenario not declared", "device: {id: t, platform: sim}\nactuators:\n  - {name: led, kind: led, pins: {pin: a}, scenarios: [parking]}\n",
		`t.yaml:3:56: actuators[0].scenarios[0]: not one of llm.scenarios`},
	{"weights do not sum to 1", "device: {id: t, platform: sim}\nllm:\n  weights: {semantic: 0.5}\n",
		`t.yaml:3:12: llm.weights: the weights must sum to 1`},
	{"broker scheme", "device: {id: t, platform: sim}\nmqtt: {broker: \"http://h:1883\"}\n",
		`t.yaml:2:16: mqtt.broker: the scheme must be tcp:// or ssl://`},
	{"embedded broker open to the LAN", "device: {id: t, platform: sim}\nmqtt: {listen: 0.0.0.0:1883}\n",
		`t.yaml:2:16: mqtt.listen: the embedded broker listens beyond this machine, but mqtt.users is empty: add users (bcrypt hashes) or listen on 127.0.0.1`},
	{"prefix without slash", "device: {id: t, platform: sim}\nmqtt: {prefix: robots/t}\n",
		`t.yaml:2:16: mqtt.prefix: must end with "/"`},
	{"bad publish filter", "device: {id: t, platform: sim}\nmqtt: {publish_allow: [\"a/#/b\"]}\n",
		`t.yaml:2:24: mqtt.publish_allow[0]: '#' must be a whole level and the last one`},
	{"bad bcrypt hash", "device: {id: t, platform: sim}\nmqtt:\n  users: [{username: ha, password_bcrypt: secret}]\n",
		`t.yaml:3:43: mqtt.users[0].password_bcrypt: expected a bcrypt hash`},
	{"unknown permission caller", "device: {id: t, platform: sim}\npermissions: {mqqt: [read]}\n",
		`t.yaml:2:15: permissions.mqqt: unknown key (did you mean "mqtt"?)`},
	{"goal without bound", "device: {id: t, platform: sim}\nagent:\n  goals: [{name: cool, source: env.temperature, text: too hot}]\n",
		`t.yaml:3:11: agent.goals[0]: needs above, below or both`},
	{"options not a mapping", "device: {id: t, platform: sim}\nsensors:\n  - {name: cam, kind: camera, options: [1]}\n",
		`t.yaml:3:40: sensors[0].options: expected a mapping of kind-specific options, got a list`},
	{"unknown alias", "device: {id: t, platform: sim}\nlog: *nope\n",
		`t.yaml:2:6: log: an unknown alias`},
}

func TestMistakes(t *testing.T) {
	for _, tc := range mistakes {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("t.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; want %s", tc.want)
			}
			if c != nil {
				t.Errorf("got a Config along with the error")
			}
			first := strings.SplitN(err.Error(), "\n", 2)[0]
			if !strings.HasPrefix(first, tc.want) {
				t.Errorf("first error:\n got %s\nwant %s…\n(all: %v)", first, tc.want, err)
			}
			var be *Error
			if !errors.As(err, &be) {
				t.Errorf("%T is not an *Error", err)
			}
		})
	}
}

// TestErrorsNeverQuoteValues: a file that is not a board file (a reload
// pointed at a secret) yields errors with keys and positions, never values.
func TestErrorsNeverQuoteValues(t *testing.T) {
	for _, body := range []string{
		"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n",
		"device: {id: x, platform: sim}\nmqtt: {qos: SECRETVALUE, keepalive: SECRETVALUE}\nagent: {queue: -7}\nlog: *SECRETALIAS\n",
		"device: {id: x, platform: sim}\nsensors: [{name: a, kind: bh1750, address: SECRETVALUE}]\n",
	} {
		_, err := Parse("s.yaml", []byte(body))
		if err == nil {
			t.Fatalf("%q accepted", body)
		}
		for _, secret := range []string{"SECRET", "MIIEvQ", "-7"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error quotes the file: %v", err)
			}
		}
	}
}
