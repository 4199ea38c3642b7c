package mqtt

import (
	"errors"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/internal/netaddr"
	"github.com/edgeagent/edgeagent/mqtt/broker"
	"github.com/edgeagent/edgeagent/mqtt/hass"
)

// Config is what the control plane needs to know, in its own terms:
// plugin/mqttplane translates it from the board file, so the transport
// does not read the board (DESIGN.md §2).
type Config struct {
	DeviceID string
	// Broker is "embedded" or a tcp:// or ssl:// URL; Listen is the
	// embedded broker's address.
	Broker, Listen string
	Prefix         string // ends in "/"
	ClientID       string
	// Credentials for an external broker; PasswordFile is read at each
	// connect.
	Username, Password, PasswordFile string
	TLS                              TLS
	// Users of the embedded broker; LocalAdmin lets every local process
	// administer through it when there are none.
	Users      []broker.User
	LocalAdmin bool
	QoS        byte
	KeepAlive  time.Duration
	Buffer     int    // outbound messages kept while disconnected
	Discovery  string // Home Assistant's discovery prefix; "" turns discovery off
	// PublishAllow are the topic filters mqtt.publish may publish to.
	PublishAllow []string
	Options      Options
	// Fleet membership: the fleet's and groups' topics and what a
	// broadcast may call (mqtt/README.md, "Fleets").
	Fleet Fleet
	// What Home Assistant discovery and telemetry describe.
	Device  hass.Device
	Sensors []Sensor
}

// Fleet is a robot's membership of a fleet; zero: none.
type Fleet struct {
	Name   string
	Groups []string
	Tools  []string // tool names or prefix.* patterns; empty: no limit beyond the mqtt caller's permissions
}

// TLS holds PEM file paths.
type TLS struct{ CA, Cert, Key string }

// Sensor is an enabled sensor as telemetry and discovery see it.
type Sensor struct {
	Name, Kind string
	// Telemetry is how often its readings are published; 0: every reading.
	Telemetry time.Duration
}

// Options are the plugin's settings under `plugins: {mqtt: …}` in the
// board file.
type Options struct {
	// Enabled false runs the agent without MQTT.
	Enabled bool `yaml:"enabled"`
	// Poll is how often new events, decisions, actuator states and
	// readings are collected from the world model for publication.
	Poll time.Duration `yaml:"poll"`
	// MaxInflight is the number of commands run at once.
	MaxInflight int `yaml:"max_inflight"`
	// Queue bounds the commands waiting for one of them; beyond it a
	// command is answered busy at once (and counted).
	Queue int `yaml:"queue"`
	// DedupWindow is how many recent command ids the journal keeps: a
	// command redelivered within it is answered, not run again. Its
	// memory grows with the ids it holds (at most this many, each for
	// DedupSpan), to about 150 bytes an id once it has turned over. Only
	// commands let in to run count: busy and invalid refusals never take a
	// place.
	DedupWindow int `yaml:"dedup_window"`
	// DedupSpan is how long an id stays in the window at most.
	DedupSpan time.Duration `yaml:"dedup_span"`
	// CommandTimeout bounds one command; default agent.cycle_timeout.
	CommandTimeout time.Duration `yaml:"command_timeout"`
	// TrustBrokerACL accepts the admin topic from an external broker. Only
	// set it when that broker's ACL lets nobody but administrators publish
	// to <prefix>admin: the agent cannot tell who published a message.
	TrustBrokerACL bool `yaml:"trust_broker_acl"`
	// ReconnectMax caps the reconnect backoff.
	ReconnectMax time.Duration `yaml:"reconnect_max"`
	// The embedded broker's door: how long a connection may take to
	// complete CONNECT, and the connections allowed per source address
	// and in total (zero: 10 s, 64, 256).
	BrokerConnectTimeout time.Duration `yaml:"broker_connect_timeout"`
	BrokerMaxPerAddress  int           `yaml:"broker_max_per_address"`
	BrokerMaxConnections int           `yaml:"broker_max_connections"`
}

// DefaultOptions are the plugin's defaults.
func DefaultOptions() Options {
	return Options{Enabled: true, Poll: 50 * time.Millisecond, MaxInflight: 32, Queue: 1024,
		DedupWindow: 10000, DedupSpan: 10 * time.Minute, CommandTimeout: 30 * time.Second, ReconnectMax: 10 * time.Second}
}

func (o Options) check() error {
	switch {
	case o.Poll <= 0:
		return errors.New("plugins.mqtt.poll must be positive")
	case o.MaxInflight < 1:
		return errors.New("plugins.mqtt.max_inflight must be at least 1")
	case o.Queue < 1:
		return errors.New("plugins.mqtt.queue must be at least 1")
	case o.DedupWindow < 100:
		return errors.New("plugins.mqtt.dedup_window must be at least 100")
	case o.DedupSpan < time.Second:
		return errors.New("plugins.mqtt.dedup_span must be at least 1s")
	case o.CommandTimeout <= 0:
		return errors.New("plugins.mqtt.command_timeout must be positive")
	case o.ReconnectMax < time.Second:
		return fmt.Errorf("plugins.mqtt.reconnect_max must be at least 1s")
	case o.BrokerConnectTimeout < 0, o.BrokerMaxPerAddress < 0, o.BrokerMaxConnections < 0:
		return errors.New("plugins.mqtt.broker_connect_timeout, broker_max_per_address and broker_max_connections must not be negative")
	}
	return nil
}

// BrokerURL is where clients on this machine reach the broker: the
// embedded one on its listen address (0.0.0.0 dialled as loopback) or the
// external URL.
func (c Config) BrokerURL() string {
	if c.Broker == "embedded" {
		return "tcp://" + netaddr.Dialable(c.Listen)
	}
	return c.Broker
}
