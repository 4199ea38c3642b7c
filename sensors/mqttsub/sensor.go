package mqttsub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Sensor is one mqtt sensor block: one client, its subscriptions.
type Sensor struct {
	name      string
	opts      Opts
	topics    []*topic
	badSource string
	clock     clock.Clock // stamps readings; paces retries and the bad-payload log
	log       *slog.Logger
	bad       atomic.Uint64 // bad payloads since start, all topics
}

// topic is a compiled Topic with its bad-payload bookkeeping.
type topic struct {
	filter   string
	qos      byte
	readings []reading
	rules    []rule
	lastLog  atomic.Int64  // unix nanos of the last bad-payload log line
	unlogged atomic.Uint64 // bad payloads since that line
}

// logEvery bounds the log lines a topic full of bad payloads can cause.
const logEvery = 10 * time.Second

func (s *Sensor) Name() string { return s.name }

// Run connects, subscribes and turns messages into readings and events
// until ctx ends, reconnecting with backoff when the broker goes away.
func (s *Sensor) Run(ctx context.Context, out sensors.Sink) error {
	h := sensors.NewHealth(s.clock, s.name, out, worldmodel.Normal)
	return sensors.Supervise(ctx, h, s.opts.Retry, func(ctx context.Context) error {
		return s.session(ctx, h, out)
	})
}

// session is one connection: it returns when ctx ends (nil) or the
// connection is lost or cannot be made (the error). paho's own reconnect is
// off so that the retry, its backoff and the health reporting are those of
// every other sensor.
func (s *Sensor) session(ctx context.Context, h *sensors.Health, out sensors.Sink) error {
	lost := make(chan error, 1)
	o, err := s.clientOptions()
	if err != nil {
		return sensors.Permanent(err)
	}
	o.SetConnectionLostHandler(func(_ paho.Client, err error) {
		select {
		case lost <- err:
		default:
		}
	})
	c := paho.NewClient(o)
	if err := mqttclient.Wait(ctx, c.Connect(), 10*time.Second); err != nil {
		return fmt.Errorf("connect %s: %w", s.opts.Broker, err)
	}
	defer c.Disconnect(250)
	for _, t := range s.topics {
		tok := c.Subscribe(t.filter, t.qos, func(_ paho.Client, m paho.Message) {
			s.handle(t, out, m.Topic(), m.Payload(), s.clock.Now())
		})
		if err := mqttclient.Wait(ctx, tok, 10*time.Second); err != nil {
			return fmt.Errorf("subscribe %s: %w", t.filter, err)
		}
		if st, ok := tok.(*paho.SubscribeToken); ok && st.Result()[t.filter] >= 0x80 {
			return fmt.Errorf("subscribe %s: refused by the broker (ACL?)", t.filter)
		}
	}
	h.OK()
	s.log.Debug("subscribed", "broker", s.opts.Broker, "topics", len(s.topics))
	select {
	case <-ctx.Done():
		return nil
	case err := <-lost:
		return fmt.Errorf("connection lost: %w", err)
	}
}

func (s *Sensor) clientOptions() (*paho.ClientOptions, error) {
	o := paho.NewClientOptions().
		AddBroker(s.opts.Broker).
		SetClientID(s.opts.ClientID).
		SetCleanSession(true). // readings are current state: what was missed while away is stale
		SetAutoReconnect(false).
		SetKeepAlive(s.opts.KeepAlive).
		SetPingTimeout(min(10*time.Second, s.opts.KeepAlive)).
		SetConnectTimeout(5 * time.Second).
		SetWriteTimeout(5 * time.Second).
		SetOrderMatters(true) // a door's open/closed must not arrive swapped; the handler never blocks
	switch {
	case s.opts.PasswordFile != "":
		file, user := s.opts.PasswordFile, s.opts.Username
		o.SetCredentialsProvider(func() (string, string) {
			b, err := os.ReadFile(file)
			if err != nil {
				s.log.Error("options.password_file unreadable", "err", err)
			}
			return user, strings.TrimSpace(string(b))
		})
	case s.opts.Username != "":
		o.SetUsername(s.opts.Username).SetPassword(s.opts.Password)
	}
	if scheme, _, _ := strings.Cut(s.opts.Broker, "://"); scheme == "ssl" || scheme == "tls" || scheme == "mqtts" || scheme == "wss" {
		tc, err := mqttclient.TLS("options.tls", mqttclient.Files(s.opts.TLS))
		if err != nil {
			return nil, err
		}
		o.SetTLSConfig(tc)
	}
	return o, nil
}

// handle turns one message into readings and events. It never blocks (the
// sink does not) and, for numeric readings, does not allocate.
func (s *Sensor) handle(t *topic, out sensors.Sink, name string, payload []byte, now time.Time) {
	defer func() {
		// The JSON scanner is third-party code fed by anyone who can
		// publish on the broker: a panic in it is a bad payload, not a
		// dead robot.
		if r := recover(); r != nil {
			s.badPayload(t, out, name, "", errors.New("extractor panicked"), now)
		}
	}()
	if len(payload) > s.opts.MaxPayload {
		s.badPayload(t, out, name, "", fmt.Errorf("payload of %d bytes exceeds max_payload", len(payload)), now)
		return
	}
	for i := range t.readings {
		r := &t.readings[i]
		o := worldmodel.Observation{Time: now, Source: r.source}
		var err error
		if r.text {
			o.Kind = worldmodel.Text
			o.Text, err = r.textValue(payload)
		} else {
			o.Kind, o.Unit = worldmodel.Reading, r.unit
			o.Value, err = r.number(payload)
		}
		switch {
		case err == errAbsent:
		case err != nil:
			s.badPayload(t, out, name, r.source, err, now)
		default:
			out.Observe(o)
		}
	}
	for i := range t.rules {
		r := &t.rules[i]
		ok, err := r.fires(payload)
		if err != nil {
			s.badPayload(t, out, name, r.kind, err, now)
			continue
		}
		if !ok {
			continue
		}
		d := r.eventData(payload)
		d["topic"] = name
		out.Raise(worldmodel.Event{
			Time: now, Kind: r.kind, Source: s.name, Priority: r.prio,
			Message: s.name + ": " + r.kind + " (" + name + ")", Data: d,
		})
	}
}

// badPayload counts a payload that did not extract and logs it, at most
// once per logEvery per topic filter, with the topic but never the
// payload (it may be anything, of any size).
func (s *Sensor) badPayload(t *topic, out sensors.Sink, name, what string, err error, now time.Time) {
	total := s.bad.Add(1)
	t.unlogged.Add(1)
	last := t.lastLog.Load()
	if now.UnixNano()-last < int64(logEvery) || !t.lastLog.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	n := t.unlogged.Swap(0)
	s.log.Warn("bad payload", "topic", name, "filter", t.filter, "for", what, "err", err, "bad_since_last_line", n, "bad_total", total)
	out.Observe(worldmodel.Observation{Time: now, Source: s.badSource, Kind: worldmodel.Reading, Value: float64(total)})
}
