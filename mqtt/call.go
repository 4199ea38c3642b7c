package mqtt

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/mqtt/fleetproto"
)

// Call sends one command to the agent running with cfg and waits for the
// reply: `edgeagent invoke` uses it when that agent holds the store. The
// agent applies the mqtt caller's permissions (admin adds the admin grant,
// through the admin topic), not the CLI's. It authenticates with the
// board's mqtt.username and password (or password_file).
func Call(ctx context.Context, cfg Config, cmd Command, admin bool) (Reply, error) {
	m := cfg
	t := NewTopics(m.Prefix, cfg.DeviceID, "")
	nonce := randomHex(6)
	if cmd.ID == "" {
		cmd.ID = "cli-" + nonce
	}
	cmd.ReplyTo = t.Reply + "/cli-" + nonce
	payload, err := json.Marshal(cmd)
	if err != nil {
		return Reply{}, err
	}
	o := paho.NewClientOptions().AddBroker(m.BrokerURL()).
		SetClientID(m.ClientID + "-cli-" + nonce).
		SetCleanSession(true).SetAutoReconnect(false).
		SetConnectTimeout(3 * time.Second).SetWriteTimeout(3 * time.Second).
		SetOrderMatters(false)
	if m.Username != "" {
		pass := m.Password
		if m.PasswordFile != "" {
			b, err := os.ReadFile(m.PasswordFile)
			if err != nil {
				return Reply{}, fmt.Errorf("mqtt.password_file: %w", err)
			}
			pass = strings.TrimSpace(string(b))
		}
		o.SetUsername(m.Username).SetPassword(pass)
	}
	if strings.HasPrefix(m.Broker, "ssl://") {
		tc, err := TLSConfig(m.TLS)
		if err != nil {
			return Reply{}, err
		}
		o.SetTLSConfig(tc)
	}
	c := paho.NewClient(o)
	if err := mqttclient.Wait(ctx, c.Connect(), 5*time.Second); err != nil {
		return Reply{}, fmt.Errorf("connecting to %s: %w", m.BrokerURL(), err)
	}
	defer c.Disconnect(100)
	replies := make(chan Reply, 1)
	sub := c.Subscribe(cmd.ReplyTo, 1, func(_ paho.Client, msg paho.Message) {
		var r Reply
		if json.Unmarshal(msg.Payload(), &r) == nil && r.ID != nil && *r.ID == cmd.ID {
			select {
			case replies <- r:
			default:
			}
		}
	})
	if err := mqttclient.Wait(ctx, sub, 5*time.Second); err != nil {
		return Reply{}, fmt.Errorf("subscribing to %s: %w", cmd.ReplyTo, err)
	}
	// A robot whose broker lost its session while we wait says so: the
	// command is sent again, with its id (fleetproto.Resender).
	resend := fleetproto.NewResender(c)
	if err := mqttclient.Wait(ctx, c.Subscribe(t.Resync, 1, resend.OnResync), 5*time.Second); err != nil {
		return Reply{}, fmt.Errorf("subscribing to %s: %w", t.Resync, err)
	}
	topic := t.Cmd
	if admin {
		topic = t.Admin
	}
	if err := mqttclient.Wait(ctx, resend.Send(topic, cmd.ID, payload, nil), 5*time.Second); err != nil {
		return Reply{}, fmt.Errorf("publishing to %s: %w", topic, err)
	}
	select {
	case r := <-replies:
		return r, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return Reply{}, fmt.Errorf("no reply on %s: is the agent connected to %s?", cmd.ReplyTo, m.BrokerURL())
		}
		return Reply{}, ctx.Err()
	}
}

// randomHex is a nonce of n random bytes for client ids and reply topics.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails on Linux (Go 1.24+ crashes rather than return an error)
	return hex.EncodeToString(b)
}
