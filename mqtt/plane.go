package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/internal/lograte"
	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/netaddr"
	"github.com/edgeagent/edgeagent/internal/wait"
	"github.com/edgeagent/edgeagent/mqtt/broker"
	"github.com/edgeagent/edgeagent/mqtt/fleetproto"
	"github.com/edgeagent/edgeagent/mqtt/hass"
	"github.com/edgeagent/edgeagent/mqtt/pump"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Host is what the control plane needs from the node that runs it, beyond
// the tools registry (plugin and config administration are tools there).
type Host interface {
	// Raise records an event, runs the Critical handlers synchronously
	// (they stop the actuators) and interrupts the agent: the e-stop path.
	Raise(worldmodel.Event)
}

// World is the world model as the plane uses it: the stream it publishes,
// read by cursor; the actuator and health states behind the retained
// topics; the resync events it records.
type World interface {
	NewCursor(fromStart bool) *worldmodel.Cursor
	Record(worldmodel.Event) worldmodel.Event
	Actuators() map[string]string
	Health() map[string]string
}

// Tools is the tools registry as the plane uses it: tool calls, their specs
// (discovery, the fleet's allow-list) and the admin check.
type Tools interface {
	Invoke(context.Context, tools.Call) (tools.Result, error)
	Resolve(name string) (tools.Spec, error)
	List() []tools.Spec
	Permitted(caller string, extra []string, perm string) bool
}

// Agent is the loop as the plane uses it: text commands go to it.
type Agent interface {
	Submit(context.Context, agent.Command) (agent.Outcome, error)
}

// Deps is what New needs; the node fills it.
type Deps struct {
	World World
	Tools Tools
	Agent Agent
	Host  Host
	// Store keeps the command journal (duplicate suppression across
	// restarts); store.Memory where nothing should persist.
	Store KV
	Log   *slog.Logger
	// Clock times the duplicate window, stamps what the plane publishes
	// and paces the pump; nil is the wall clock.
	Clock clock.Clock
}

// Plane is the MQTT control plane, a plugin of the node: commands in,
// replies, events, telemetry, decisions and availability out, the e-stop
// topic, Home Assistant discovery, administration, and the embedded broker.
type Plane struct {
	d       Deps
	cfg     Config
	opts    Options
	topics  Topics
	fleet   fleetproto.Topics
	started time.Time // when the plane was built: fleetproto.RobotInfo.Started
	log     *slog.Logger

	mu  sync.Mutex
	run *runState

	in       inboundStats
	badInput atomic.Uint64
	// streamMissed: stream items the pumps of earlier runs lost to the
	// rings (the current run's pump counts its own).
	streamMissed atomic.Uint64
	logLimit     lograte.Limit
	busyLog      lograte.Limit
}

// runState is one start..stop of the plane.
type runState struct {
	ctx      context.Context
	cancel   context.CancelFunc
	broker   *broker.Broker // nil with an external broker
	conn     *conn
	admin    bool // the admin topic is accepted
	handlers tracker
	pump     *pump.Pump
	pumpDone chan struct{}

	queue       chan *job     // pointers: a job is ~600 bytes, the queue 1024 deep
	slots       chan struct{} // places in the queue, taken before a command is journalled
	workers     wait.Group
	journal     *journal
	journalStop context.CancelFunc
	journalDone chan struct{}

	session session // what the broker's last CONNACK said of our session

	discMu      sync.Mutex
	discRemoved bool // removed on request: not re-announced until asked
}

// New builds the plane from its config and the node's parts; nothing
// starts until OnAgentStart.
func New(cfg Config, d Deps) (*Plane, error) {
	if !cfg.Options.Enabled {
		return nil, hooks.Decline("disabled in plugins.mqtt.enabled")
	}
	if err := cfg.Options.check(); err != nil {
		return nil, err
	}
	if d.Store == nil {
		return nil, errors.New("mqtt: no store for the command journal")
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	d.Clock = clock.Or(d.Clock)
	return &Plane{
		d: d, cfg: cfg, opts: cfg.Options, log: d.Log.With("component", "mqtt"),
		topics: NewTopics(cfg.Prefix, cfg.DeviceID, cfg.Discovery),
		fleet:  fleetproto.Member(cfg.FleetRoot(), cfg.Fleet.Name, cfg.Fleet.Groups), started: d.Clock.Now(),
	}, nil
}

// Info names the plugin.
func (p *Plane) Info() hooks.Info {
	return hooks.Info{Name: "mqtt", Version: "1", Description: "MQTT control plane: commands, replies, events, telemetry, decisions, e-stop, Home Assistant discovery, embedded broker"}
}

func (p *Plane) current() *runState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.run
}

// OnAgentStart starts the embedded broker (or finds the broker already on
// its port), connects, and starts publishing. Connecting is not awaited:
// paho keeps retrying, and the robot works without its control plane.
func (p *Plane) OnAgentStart(context.Context) error {
	if p.current() != nil {
		return errors.New("mqtt: already started")
	}
	rs := &runState{pumpDone: make(chan struct{}), queue: make(chan *job, p.opts.Queue),
		slots:   make(chan struct{}, p.opts.Queue),
		journal: newJournal(p.d.Store, Window{Count: p.opts.DedupWindow, Span: p.opts.DedupSpan, Clock: p.d.Clock}, p.log), journalDone: make(chan struct{})}
	rs.pump = p.newPump(rs)
	rs.session.lostAt.Store(p.d.Clock.Now().UnixNano()) // the gap before the first connection
	rs.ctx, rs.cancel = context.WithCancel(context.Background())
	jctx, jstop := context.WithCancel(context.Background())
	rs.journalStop = jstop
	go func() { defer close(rs.journalDone); rs.journal.run(jctx) }()
	url, username, password, err := p.startBroker(rs)
	if err != nil {
		rs.cancel()
		_ = rs.stopWorkers(context.Background())
		return err
	}
	var who string
	rs.admin, who = p.adminPolicy(rs.broker != nil)
	p.log.Info("MQTT admin: "+who, "topic", p.topics.Admin, "accepted", rs.admin, "broker", url)
	opts, err := p.clientOptions(rs, url, username, password)
	if err != nil {
		if rs.broker != nil {
			_ = rs.broker.Close()
		}
		rs.cancel()
		_ = rs.stopWorkers(context.Background())
		return err
	}
	rs.conn = &conn{client: paho.NewClient(opts), broker: url, box: newOutbox(p.cfg.Buffer)}
	rs.conn.client.Connect() // completes on success only (ConnectRetry); progress is reported by the handlers
	p.mu.Lock()
	p.run = rs
	p.mu.Unlock()
	p.startWorkers(rs)
	go func() { defer close(rs.pumpDone); rs.pump.Run(rs.ctx) }()
	return nil
}

// newPump makes the run's consumer of the stream: it publishes through the
// run's connection and has discovery announce new entities.
func (p *Plane) newPump(rs *runState) *pump.Pump {
	cfg := pump.Config{QoS: byte(p.cfg.QoS), Poll: p.opts.Poll, Telemetry: map[string]time.Duration{},
		Topics: pump.Topics{Events: p.topics.Events, Decisions: p.topics.Decisions, State: p.topics.State, Telemetry: p.topics.Telemetry},
		Publish: func(topic string, payload []byte, qos byte, retain bool) {
			rs.conn.publish(message{topic: topic, payload: payload, qos: qos, retain: retain})
		},
		Announce: func() { p.publishDiscovery(rs) },
		Clock:    p.d.Clock, Log: p.log}
	for _, s := range p.cfg.Sensors {
		cfg.Telemetry[s.Name] = s.Telemetry
		if hass.MotionKind(s.Kind) {
			cfg.Motion = append(cfg.Motion, s.Name)
		}
	}
	return pump.New(p.d.World, cfg)
}

// startBroker starts the embedded broker when the board asks for it and
// returns where to connect. When its port is taken by another MQTT broker
// (mosquitto for Home Assistant, typically) it says so and uses that one.
func (p *Plane) startBroker(rs *runState) (url, username, password string, err error) {
	m := p.cfg
	if m.Broker != "embedded" {
		return m.Broker, m.Username, m.Password, nil
	}
	t := p.topics
	b, err := broker.Start(broker.Config{Listen: m.Listen, Users: m.Users, Log: p.log, Clock: p.d.Clock,
		ACL:    broker.ACL{Prefix: t.Prefix, Discovery: t.Discovery, Publish: []string{t.Cmd, t.Estop, t.HAStatus}},
		Limits: broker.Limits{ConnectTimeout: p.opts.BrokerConnectTimeout, PerSource: p.opts.BrokerMaxPerAddress, Total: p.opts.BrokerMaxConnections},
		Store:  p.d.Store, Takes: p.takesCommands,
		Oversized:     func(topic string, head []byte, size int) bool { return p.onOversized(rs, topic, head, size) },
		OversizedHead: MaxPayload})
	switch {
	case err == nil:
		rs.broker = b
		p.log.Info("embedded MQTT broker listening", "addr", b.Addr(), "auth", len(m.Users) > 0)
		if len(m.Users) > 0 {
			user, pass := b.Login()
			return b.URL(), user, pass, nil
		}
		return b.URL(), "", "", nil
	case errors.Is(err, broker.ErrAddrInUse):
		if perr := broker.Probe(m.Listen, 2*time.Second); perr != nil {
			return "", "", "", fmt.Errorf("%w, and not by an MQTT broker (%v): free the port or set mqtt.listen", err, perr)
		}
		url = "tcp://" + netaddr.Dialable(m.Listen)
		p.log.Warn("an MQTT broker (mosquitto?) already listens on "+m.Listen+": connecting to it instead of starting the embedded broker", "broker", url)
		return url, m.Username, m.Password, nil
	}
	return "", "", "", err
}

func (p *Plane) clientOptions(rs *runState, url, username, password string) (*paho.ClientOptions, error) {
	m := p.cfg
	route := p.router(rs)
	o := paho.NewClientOptions().
		AddBroker(url).
		SetClientID(m.ClientID).
		SetCleanSession(false). // QoS 1 commands wait for us at the broker while we are away
		SetStore(copyingStore{paho.NewMemoryStore()}).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(time.Second).
		SetMaxReconnectInterval(p.opts.ReconnectMax).
		SetOrderMatters(false). // one slow command must not hold up an e-stop
		SetAutoAckDisabled(true).
		SetKeepAlive(m.KeepAlive).
		SetPingTimeout(min(10*time.Second, m.KeepAlive)).
		SetConnectTimeout(5*time.Second).
		SetWriteTimeout(5*time.Second).
		SetBinaryWill(p.topics.Status, []byte("offline"), 1, true).
		SetDefaultPublishHandler(route). // session messages that arrive before we re-subscribe
		SetOnConnectHandler(func(paho.Client) { p.onConnect(rs, route) }).
		SetCustomOpenConnectionFn(rs.session.dial). // to see the session-present flag of every CONNACK
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			rs.session.lostAt.Store(p.d.Clock.Now().UnixNano())
			rs.conn.setErr(err)
			p.log.Warn("MQTT connection lost; reconnecting", "err", err)
		}).
		SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
			if f, ok := n.(paho.ConnectionNotificationFailed); ok && rs.conn != nil {
				rs.conn.setErr(f.Reason)
				if p.logLimit.Allow(p.d.Clock.Now()) {
					p.log.Warn("MQTT connect failed; retrying", "broker", url, "err", f.Reason)
				}
			}
		})
	switch {
	case m.PasswordFile != "" && username != "" && rs.broker == nil:
		file := m.PasswordFile
		o.SetCredentialsProvider(func() (string, string) {
			b, err := os.ReadFile(file)
			if err != nil {
				p.log.Error("mqtt.password_file unreadable", "err", err)
			}
			return username, strings.TrimSpace(string(b))
		})
	case username != "":
		o.SetUsername(username).SetPassword(password)
	}
	if strings.HasPrefix(url, "ssl://") {
		tc, err := TLSConfig(m.TLS)
		if err != nil {
			return nil, err
		}
		o.SetTLSConfig(tc)
	}
	return o, nil
}

// onConnect runs on every (re)connection: subscribe again (a broker that
// restarted without persistence forgot us, and then a resync says so),
// announce "online" and the discovery, then flush what was buffered
// meanwhile.
func (p *Plane) onConnect(rs *runState, route paho.MessageHandler) {
	if !rs.handlers.enter() {
		return
	}
	defer rs.handlers.leave()
	c := rs.conn
	qos := byte(p.cfg.QoS)
	// The admin topic is subscribed even where it is not accepted, so
	// that a request there is refused with a reason, not met with silence.
	filters := map[string]byte{p.topics.Cmd: qos, p.topics.Estop: qos, p.topics.Admin: qos}
	p.fleetFilters(filters, qos)
	if p.topics.Discovery != "" {
		filters[p.topics.HAStatus] = 0
	}
	tok := c.client.SubscribeMultiple(filters, route)
	if err := mqttclient.Wait(rs.ctx, tok, 10*time.Second); err != nil {
		c.setErr(fmt.Errorf("subscribe: %w", err))
		p.log.Error("MQTT subscribe failed", "err", err)
	} else if st, ok := tok.(*paho.SubscribeToken); ok {
		for topic, granted := range st.Result() {
			if granted == 0x80 {
				c.setErr(fmt.Errorf("broker refused subscription to %s", topic))
				p.log.Error("broker refused the subscription (ACL?)", "topic", topic)
			}
		}
	}
	p.announceResync(rs)
	if rs.broker != nil && rs.conn.connects.Load() == 0 {
		if n := rs.broker.Redeliver(); n > 0 {
			p.log.Warn("embedded broker: commands it had acknowledged before the agent stopped delivered again (the command journal answers those that ran)", "commands", n)
		}
	}
	c.send(message{topic: p.topics.Status, payload: []byte("online"), qos: 1, retain: true})
	c.send(message{topic: p.topics.Info, payload: p.info(), qos: 1, retain: true})
	p.publishDiscovery(rs)
	rs.pump.Republish()
	c.flush()
	c.connects.Add(1) // counted once subscribed: commands from now on reach us
	p.log.Info("MQTT connected", "broker", c.broker, "prefix", p.topics.Prefix)
}

// OnAgentStop stops publishing, lets running commands finish (bounded by
// ctx), says "stopped", disconnects and stops the embedded broker. All of
// it ends by ctx's deadline: after a flood, "stopped" waits behind
// thousands of replies in paho's queue and the broker's clients hold
// thousands unacknowledged, so the courtesies (the status, a quiet
// disconnect, the broker's drain) each get a short share of what is left
// and are skipped once it is gone; the node's 2 s covers everything.
func (p *Plane) OnAgentStop(ctx context.Context) error {
	p.mu.Lock()
	rs := p.run
	p.run = nil
	p.mu.Unlock()
	if rs == nil {
		return nil
	}
	rs.cancel()
	<-rs.pumpDone
	p.streamMissed.Add(rs.pump.Missed())
	err := errors.Join(rs.handlers.close(ctx), rs.stopWorkers(ctx))
	if d := budget(ctx, 300*time.Millisecond); d > 0 && rs.conn.client.IsConnectionOpen() {
		tok := rs.conn.client.Publish(p.topics.Status, 1, true, []byte("stopped"))
		if werr := mqttclient.Wait(context.WithoutCancel(ctx), tok, d); werr != nil {
			p.log.Warn("MQTT: could not publish stopped", "err", werr)
		}
	}
	rs.conn.client.Disconnect(uint(budget(ctx, 100*time.Millisecond).Milliseconds()))
	if rs.broker != nil {
		dctx, cancel := context.WithTimeout(ctx, budget(ctx, 300*time.Millisecond))
		rs.broker.Drain(dctx, p.cfg.ClientID)
		cancel()
		err = errors.Join(err, rs.broker.Close())
	}
	return err
}

// budget is what a stop step may take: at most max, and at most half of
// what is left before ctx's deadline (the other plugins stop after us).
// A context's deadline is on the wall clock, whatever clock the plane runs on.
func budget(ctx context.Context, most time.Duration) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return most
	}
	return max(0, min(most, d.Sub(clock.Real().Now())/2))
}

// Status is the "mqtt" component of agent.status.
func (p *Plane) Status() any {
	rs := p.current()
	if rs == nil {
		return map[string]any{"connected": false, "state": "stopped"}
	}
	st := struct {
		connStats
		Embedded bool `json:"embedded_broker"`
		Admin    bool `json:"admin_topic"`
		// Commands run; busy: refused because the queue was full;
		// duplicates: answered from the journal instead of run again;
		// interrupted: redelivered after the agent died running them.
		Commands      uint64 `json:"commands"`
		Queued        int    `json:"queued"`
		Busy          uint64 `json:"busy"`
		Duplicates    uint64 `json:"duplicates"`
		Interrupted   uint64 `json:"interrupted"`
		BadInput      uint64 `json:"bad_input"`
		Journal       int    `json:"journal_ids"`
		JournalFailed uint64 `json:"journal_failed,omitempty"`
		// BrokerDropped: messages the embedded broker could not deliver
		// to some client (its queue for that client was full).
		BrokerDropped int64 `json:"broker_dropped,omitempty"`
		// BrokerConns: connections the embedded broker refused (over a
		// cap) or closed (CONNECT not completed in time, keepalive).
		BrokerConns *broker.Conns `json:"broker_connections,omitempty"`
		// StreamMissed: world-model items the pump fell too far behind
		// to publish (DESIGN.md §9a: a gap is counted, never a stall).
		StreamMissed uint64 `json:"stream_missed"`
	}{connStats: rs.conn.stats(), Embedded: rs.broker != nil, Admin: rs.admin,
		Commands: p.in.commands.Load(), Queued: len(rs.queue), Busy: p.in.busy.Load(),
		Duplicates: p.in.duplicates.Load(), Interrupted: p.in.interrupted.Load(),
		BadInput: p.badInput.Load(), Journal: rs.journal.size(), JournalFailed: rs.journal.failed.Load(),
		StreamMissed: p.streamMissed.Load() + rs.pump.Missed()}
	if rs.broker != nil {
		st.BrokerDropped = rs.broker.Dropped()
		c := rs.broker.Conns()
		st.BrokerConns = &c
	}
	return st
}

// publish sends (or buffers) a message; it reports whether it was buffered.
func (p *Plane) publish(topic string, payload []byte, qos byte, retain bool) (queued bool, err error) {
	rs := p.current()
	if rs == nil {
		return false, &RequestError{Code: CodeBusy, Msg: "MQTT is not running"}
	}
	return rs.conn.publish(message{topic: topic, payload: payload, qos: qos, retain: retain}), nil
}

// router dispatches inbound messages. A message that arrives while the
// plane stops is not acknowledged, so the broker hands it to the next
// session instead of it being lost.
func (p *Plane) router(rs *runState) paho.MessageHandler {
	return func(_ paho.Client, msg paho.Message) {
		if !rs.handlers.enter() {
			return
		}
		defer rs.handlers.leave()
		rs.conn.received.Add(1)
		switch msg.Topic() {
		case p.topics.Estop:
			p.onEstop(rs, msg)
		case p.topics.Cmd:
			if p.onCommand(rs, msg, source{}) {
				return // queued: the worker acknowledges it
			}
		case p.topics.Admin:
			if rs.admin {
				if p.onCommand(rs, msg, source{admin: true}) {
					return
				}
			} else if !msg.Retained() {
				p.refuseAdmin(rs, msg.Topic(), msg.Payload())
			}
		case p.topics.HAStatus:
			if string(msg.Payload()) == "online" {
				p.publishDiscovery(rs) // Home Assistant restarted: announce again
				rs.pump.Republish()
			}
		default:
			if p.routeFleet(rs, msg) {
				return // queued: the worker acknowledges it
			}
		}
		rs.ack(msg)
	}
}

// takesCommands says whether the plane takes commands on topic: what the
// embedded broker's inbox keeps until the plane has acknowledged it.
func (p *Plane) takesCommands(topic string) bool {
	return topic == p.topics.Cmd || topic == p.topics.Admin ||
		p.fleet.Cmd != "" && (topic == p.fleet.Cmd || slices.Contains(p.fleet.Groups, topic))
}

// ack acknowledges a message to the broker, and to the embedded broker's
// inbox, which then forgets it.
func (rs *runState) ack(msg paho.Message) {
	msg.Ack()
	if rs.broker != nil {
		rs.broker.Settled(msg.Topic(), msg.Payload())
	}
}

// AfterPlan publishes decisions that failed before acting (no decision
// engine, an invalid plan); the others arrive as world-model "decision"
// events with their traces and are published by the pump.
func (p *Plane) AfterPlan(_ context.Context, d hooks.Decision) error {
	if d.Err == nil {
		return nil
	}
	data, err := json.Marshal(map[string]any{"time": p.d.Clock.Now(), "cycle": d.Cycle, "path": d.Path, "ok": false, "error": d.Err.Error()})
	if err != nil {
		return err
	}
	_, err = p.publish(p.topics.Decisions, data, byte(p.cfg.QoS), false)
	if errors.As(err, new(*RequestError)) {
		return nil // not running: nothing to tell
	}
	return err
}

// tracker counts running handlers and refuses new ones once closed.
type tracker struct {
	mu     sync.Mutex
	closed bool
	wg     wait.Group
}

func (t *tracker) enter() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.wg.Add(1)
	return true
}

func (t *tracker) leave() { t.wg.Done() }

// close refuses new handlers and waits for the running ones, up to ctx.
func (t *tracker) close(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	t.mu.Unlock()
	if err := t.wg.Wait(ctx); err != nil {
		return fmt.Errorf("mqtt: handlers still running at stop: %w", err)
	}
	return nil
}
