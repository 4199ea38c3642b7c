// Package mqttsub is the "mqtt" sensor kind: topics on an MQTT broker
// become readings and events, so the sensors a house already has
// (Zigbee2MQTT, Frigate, Home Assistant's MQTT statestream) are sensors of
// the robot — a config change, like the I2C generic kind. Each entry of a
// topic's readings becomes the reading <name>.<reading name>; each entry
// of its events raises an event of that kind with the sensor as source
// (so a reflex says `on: frigate/person`). Thresholds work on the readings
// as on any sensor's.
//
// Sample block — a Zigbee2MQTT temperature sensor and a Frigate person
// detection on the house's mosquitto:
//
//	sensors:
//	  - name: living
//	    kind: mqtt
//	    thresholds:
//	      - {quantity: temperature, above: 28, hysteresis: 1, event: too_warm}
//	    options:
//	      broker: tcp://192.168.1.10:1883   # default: the robot's own broker (mqtt.broker)
//	      username: edgeagent
//	      password_file: secrets/mqtt-house   # relative to the board file
//	      topics:
//	        - topic: zigbee2mqtt/living_room_sensor
//	          readings:
//	            - {name: temperature, json: temperature, unit: "°C"}
//	            - {name: humidity, json: humidity, unit: "%RH"}
//	  - name: frigate
//	    kind: mqtt
//	    priority: high
//	    options:
//	      broker: tcp://192.168.1.10:1883
//	      topics:
//	        - topic: frigate/events
//	          events:
//	            - event: person
//	              match: [{json: type, equals: [new]}, {json: after.label, equals: [person]}]
//	              data: {camera: after.camera, score: after.top_score, zones: after.current_zones}
//
// Extraction (see Reading): json picks a value by path (a.b[0].c), regexp
// takes its first capture group, on/off map words to 1/0, then
// value × scale + offset; text keeps the value as text. A key that is
// missing or null is skipped quietly (Zigbee2MQTT sends partial updates).
// Anything else that does not extract — not JSON, not a number, no regexp
// match, an unknown on/off word, a payload over max_payload (1 MiB) — is a
// bad payload: counted in <name>.bad_payloads and logged with the topic
// (at most once per 10 s per topic filter), never echoed, never fatal.
// The handler never blocks, so a flood costs CPU, not the connection.
package mqttsub

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func init() { sensors.Register("mqtt", New) }

// DefaultBroker is the robot's own broker: the embedded one on its default
// listen address, or the mosquitto that Home Assistant users run beside it.
const DefaultBroker = "tcp://127.0.0.1:1883"

// Opts is the options block.
type Opts struct {
	Broker       string `yaml:"broker"` // tcp://, mqtt://, ssl://, tls://, mqtts://, ws://, wss://
	ClientID     string `yaml:"client_id"`
	Username     string `yaml:"username"`
	Password     string `yaml:"password"`
	PasswordFile string `yaml:"password_file"` // read at each connect; relative to the board file
	TLS          TLS    `yaml:"tls"`
	// KeepAlive is the MQTT keepalive; a dead broker is noticed within
	// about 1.5 × this.
	KeepAlive  time.Duration   `yaml:"keepalive"`
	MaxPayload int             `yaml:"max_payload"` // bytes; larger payloads are bad
	Topics     []Topic         `yaml:"topics"`
	Retry      sensors.Backoff `yaml:"retry"` // reconnect backoff
}

// TLS holds PEM file paths, relative to the board file or absolute.
type TLS struct {
	CA   string `yaml:"ca"`
	Cert string `yaml:"cert"`
	Key  string `yaml:"key"`
}

// Topic is one subscription.
type Topic struct {
	Topic    string    `yaml:"topic"` // a filter: + and # allowed
	QoS      int       `yaml:"qos"`   // 0 or 1
	Readings []Reading `yaml:"readings"`
	Events   []Rule    `yaml:"events"`
}

// New builds an mqtt sensor. It checks the options and compiles the
// extractors; it does not connect.
func New(cfg sensors.Config) (sensors.Sensor, error) {
	opts := Opts{Broker: cmp.Or(cfg.Broker, DefaultBroker), KeepAlive: 30 * time.Second, MaxPayload: 1 << 20}
	if err := cfg.DecodeOptions(&opts); err != nil {
		return nil, err
	}
	var errs []error
	u, err := url.Parse(opts.Broker)
	switch {
	case err != nil || u.Host == "":
		errs = append(errs, fmt.Errorf("options.broker: want a URL such as tcp://host:1883"))
	case !knownScheme[u.Scheme]:
		errs = append(errs, errors.New("options.broker: the scheme is not tcp, mqtt, ssl, tls, mqtts, ws or wss"))
	}
	if opts.Password != "" && opts.PasswordFile != "" {
		errs = append(errs, errors.New("options: set password or password_file, not both"))
	}
	if (opts.TLS.Cert == "") != (opts.TLS.Key == "") {
		errs = append(errs, errors.New("options.tls: cert and key go together"))
	}
	if opts.KeepAlive < time.Second {
		errs = append(errs, errors.New("options.keepalive: at least 1s"))
	}
	if opts.MaxPayload <= 0 || opts.MaxPayload > 256<<20 {
		errs = append(errs, errors.New("options.max_payload: 1 byte to 256 MiB"))
	}
	if len(opts.Topics) == 0 {
		errs = append(errs, errors.New("options.topics: at least one topic"))
	}
	s := &Sensor{name: cfg.Name, opts: opts, clock: clock.Or(cfg.Clock), log: slog.Default().With("sensor", cfg.Name, "kind", "mqtt")}
	s.badSource = cfg.Name + ".bad_payloads"
	prio := cfg.PriorityOr(worldmodel.High)
	for i, t := range opts.Topics {
		ct, err := compileTopic(cfg.Name, t, prio)
		if err != nil {
			errs = append(errs, fmt.Errorf("options.topics[%d]: %w", i, err))
			continue
		}
		s.topics = append(s.topics, ct)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	s.opts.PasswordFile = resolve(cfg.Dir, opts.PasswordFile)
	s.opts.TLS = TLS{CA: resolve(cfg.Dir, opts.TLS.CA), Cert: resolve(cfg.Dir, opts.TLS.Cert), Key: resolve(cfg.Dir, opts.TLS.Key)}
	if s.opts.ClientID == "" {
		// Unique per process: two robots (or a restart racing the old
		// session) must not kick each other off the broker.
		b := make([]byte, 4)
		_, _ = rand.Read(b)
		s.opts.ClientID = "edgeagent-" + cfg.Name + "-" + hex.EncodeToString(b)
	}
	return s, nil
}

var knownScheme = map[string]bool{"tcp": true, "mqtt": true, "ssl": true, "tls": true, "mqtts": true, "ws": true, "wss": true}

func resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

func compileTopic(sensor string, t Topic, prio worldmodel.Priority) (*topic, error) {
	ct := &topic{filter: t.Topic, qos: byte(t.QoS)}
	if err := validFilter(t.Topic); err != nil {
		return nil, err
	}
	if t.QoS < 0 || t.QoS > 1 {
		return nil, errors.New("qos: 0 or 1")
	}
	if len(t.Readings) == 0 && len(t.Events) == 0 {
		return nil, errors.New("no readings and no events: nothing to take from it")
	}
	for i, r := range t.Readings {
		cr, err := compileReading(sensor, r)
		if err != nil {
			return nil, fmt.Errorf("readings[%d]: %w", i, err)
		}
		ct.readings = append(ct.readings, cr)
	}
	for i, r := range t.Events {
		cr, err := compileRule(r)
		if err != nil {
			return nil, fmt.Errorf("events[%d]: %w", i, err)
		}
		p := prio
		if r.Priority != "" {
			if p, err = worldmodel.ParsePriority(r.Priority); err != nil {
				return nil, fmt.Errorf("events[%d].priority: %w", i, err)
			}
		}
		cr.prio = p
		ct.rules = append(ct.rules, cr)
	}
	return ct, nil
}

// validFilter checks an MQTT topic filter: wildcards only as whole levels,
// # only last.
func validFilter(f string) error {
	if f == "" || len(f) > 65535 || strings.ContainsRune(f, 0) {
		return errors.New("topic: want a non-empty MQTT topic filter")
	}
	levels := strings.Split(f, "/")
	for i, l := range levels {
		switch {
		case l == "#" && i != len(levels)-1:
			return errors.New("topic: # must be the last level")
		case l != "#" && l != "+" && strings.ContainsAny(l, "#+"):
			return errors.New("topic: + and # stand for whole levels")
		}
	}
	return nil
}
