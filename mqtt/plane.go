package mqtt

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/hooks"
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

// Deps is what New needs; the node fills it.
type Deps struct {
	Board *board.Config
	World *worldmodel.Model
	Tools *tools.Registry
	Agent *agent.Loop
	Host  Host
	Log   *slog.Logger
}

// Options are the plugin's settings under `plugins: {mqtt: …}` in the board
// file; the broker, topics and users are in the board's mqtt section.
type Options struct {
	// Enabled false runs the agent without MQTT.
	Enabled bool `yaml:"enabled"`
	// Poll is how often new events, decisions, actuator states and
	// readings are collected from the world model for publication.
	Poll time.Duration `yaml:"poll"`
	// MaxInflight bounds the commands handled at once; more wait (QoS 1
	// back-pressure reaches the broker) and are refused as busy after 5 s.
	MaxInflight int `yaml:"max_inflight"`
	// CommandTimeout bounds one command; default agent.cycle_timeout.
	CommandTimeout time.Duration `yaml:"command_timeout"`
	// TrustBrokerACL accepts the admin topic from an external broker. Only
	// set it when that broker's ACL lets nobody but administrators publish
	// to <prefix>admin: the agent cannot tell who published a message.
	TrustBrokerACL bool `yaml:"trust_broker_acl"`
	// ReconnectMax caps the reconnect backoff.
	ReconnectMax time.Duration `yaml:"reconnect_max"`
}

// defaultOptions are the plugin's defaults.
func defaultOptions() Options {
	return Options{Enabled: true, Poll: 50 * time.Millisecond, MaxInflight: 32, ReconnectMax: 10 * time.Second}
}

// Plane is the MQTT control plane, a plugin of the node: commands in,
// replies, events, telemetry, decisions and availability out, the e-stop
// topic, Home Assistant discovery, administration, and the embedded broker.
type Plane struct {
	d       Deps
	opts    Options
	m       board.MQTT
	topics  Topics
	fleet   FleetTopics
	started time.Time // when the plane was built: RobotInfo.Started
	log     *slog.Logger
	sem     chan struct{}

	mu  sync.Mutex
	run *runState

	badInput atomic.Uint64
	commands atomic.Uint64
	logLimit rateLimit
}

// runState is one start..stop of the plane.
type runState struct {
	ctx      context.Context
	cancel   context.CancelFunc
	broker   *Broker // nil with an external broker
	conn     *conn
	admin    bool // the admin topic is accepted
	handlers tracker
	pumpDone chan struct{}
	recent   *recentReplies

	republish atomic.Bool // the pump re-publishes all retained state (after a connect)

	discMu      sync.Mutex
	numeric     map[string]string // world-model source -> unit, for sensors in discovery
	motion      map[string]bool   // sources of motion events, for binary sensors
	discRemoved bool              // removed on request: not re-announced until asked
}

// New builds the plane from the node's parts; nothing starts until
// OnAgentStart.
func New(d Deps) (*Plane, error) {
	opts := defaultOptions()
	if err := d.Board.Plugins["mqtt"].Decode(&opts); err != nil {
		return nil, err
	}
	if !opts.Enabled {
		return nil, hooks.Decline("disabled in plugins.mqtt.enabled")
	}
	switch {
	case opts.Poll <= 0:
		return nil, fmt.Errorf("plugins.mqtt.poll must be positive")
	case opts.MaxInflight < 1:
		return nil, fmt.Errorf("plugins.mqtt.max_inflight must be at least 1")
	case opts.ReconnectMax < time.Second:
		return nil, fmt.Errorf("plugins.mqtt.reconnect_max must be at least 1s")
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = d.Board.Agent.CycleTimeout
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = 30 * time.Second
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	m := d.Board.MQTT
	disc := ""
	if m.Discovery.Enabled {
		disc = m.Discovery.Prefix
	}
	return &Plane{
		d: d, opts: opts, m: m, log: d.Log.With("component", "mqtt"),
		topics: NewTopics(m.Prefix, d.Board.Device.ID, disc),
		fleet:  NewFleetTopics(m.Prefix, d.Board.Device.ID, d.Board.Fleet), started: time.Now(),
		sem: make(chan struct{}, opts.MaxInflight),
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
	rs := &runState{pumpDone: make(chan struct{}), recent: newRecentReplies(256),
		numeric: map[string]string{}, motion: map[string]bool{}}
	for _, s := range p.d.Board.Sensors {
		if s.Enabled && motionSensor(s.Kind) {
			rs.motion[s.Name] = true
		}
	}
	rs.ctx, rs.cancel = context.WithCancel(context.Background())
	url, username, password, err := p.startBroker(rs)
	if err != nil {
		rs.cancel()
		return err
	}
	rs.admin = rs.broker != nil || p.opts.TrustBrokerACL
	if !rs.admin {
		p.log.Info("admin topic not accepted: this broker's ACL is not ours to trust (set plugins.mqtt.trust_broker_acl if it restricts "+p.topics.Admin+")", "broker", url)
	}
	opts, err := p.clientOptions(rs, url, username, password)
	if err != nil {
		if rs.broker != nil {
			_ = rs.broker.Close()
		}
		rs.cancel()
		return err
	}
	rs.conn = &conn{client: paho.NewClient(opts), broker: url, box: newOutbox(p.m.Buffer)}
	rs.conn.client.Connect() // completes on success only (ConnectRetry); progress is reported by the handlers
	p.mu.Lock()
	p.run = rs
	p.mu.Unlock()
	go p.pump(rs)
	return nil
}

// startBroker starts the embedded broker when the board asks for it and
// returns where to connect. When its port is taken by another MQTT broker
// (mosquitto for Home Assistant, typically) it says so and uses that one.
func (p *Plane) startBroker(rs *runState) (url, username, password string, err error) {
	m := p.m
	if m.Broker != "embedded" {
		return m.Broker, m.Username, m.Password, nil
	}
	b, err := StartBroker(BrokerConfig{Listen: m.Listen, Users: m.Users, Topics: p.topics, Log: p.log})
	switch {
	case err == nil:
		rs.broker = b
		p.log.Info("embedded MQTT broker listening", "addr", b.Addr(), "auth", len(m.Users) > 0)
		if len(m.Users) > 0 {
			return b.URL(), b.internalUser, b.internalPass, nil
		}
		return b.URL(), "", "", nil
	case errors.Is(err, ErrAddrInUse):
		if perr := probeBroker(m.Listen, 2*time.Second); perr != nil {
			return "", "", "", fmt.Errorf("%w, and not by an MQTT broker (%v): free the port or set mqtt.listen", err, perr)
		}
		url = "tcp://" + dialable(m.Listen)
		p.log.Warn("an MQTT broker (mosquitto?) already listens on "+m.Listen+": connecting to it instead of starting the embedded broker", "broker", url)
		return url, m.Username, m.Password, nil
	}
	return "", "", "", err
}

func (p *Plane) clientOptions(rs *runState, url, username, password string) (*paho.ClientOptions, error) {
	m := p.m
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
		SetConnectionLostHandler(func(_ paho.Client, err error) {
			rs.conn.setErr(err)
			p.log.Warn("MQTT connection lost; reconnecting", "err", err)
		}).
		SetConnectionNotificationHandler(func(_ paho.Client, n paho.ConnectionNotification) {
			if f, ok := n.(paho.ConnectionNotificationFailed); ok && rs.conn != nil {
				rs.conn.setErr(f.Reason)
				if p.logLimit.allow() {
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
		tc, err := tlsConfig(m.TLS)
		if err != nil {
			return nil, err
		}
		o.SetTLSConfig(tc)
	}
	return o, nil
}

func tlsConfig(t board.TLS) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if t.CA != "" {
		pem, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, fmt.Errorf("mqtt.tls.ca: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("mqtt.tls.ca: %s holds no PEM certificate", t.CA)
		}
	}
	if t.Cert != "" {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("mqtt.tls.cert/key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	return tc, nil
}

// onConnect runs on every (re)connection: subscribe again (a broker that
// restarted without persistence forgot us), announce "online" and the
// discovery, then flush what was buffered meanwhile.
func (p *Plane) onConnect(rs *runState, route paho.MessageHandler) {
	if !rs.handlers.enter() {
		return
	}
	defer rs.handlers.leave()
	c := rs.conn
	qos := byte(p.m.QoS)
	// The admin topic is subscribed even where it is not accepted, so
	// that a request there is refused with a reason, not met with silence.
	filters := map[string]byte{p.topics.Cmd: qos, p.topics.Estop: qos, p.topics.Admin: qos}
	p.fleetFilters(filters, qos)
	if p.topics.Discovery != "" {
		filters[p.topics.HAStatus] = 0
	}
	tok := c.client.SubscribeMultiple(filters, route)
	if err := wait(rs.ctx, tok, 10*time.Second); err != nil {
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
	c.send(message{topic: p.topics.Status, payload: []byte("online"), qos: 1, retain: true})
	c.send(message{topic: p.topics.Info, payload: p.info(), qos: 1, retain: true})
	p.publishDiscovery(rs)
	rs.republish.Store(true)
	c.flush()
	c.connects.Add(1) // counted once subscribed: commands from now on reach us
	p.log.Info("MQTT connected", "broker", c.broker, "prefix", p.topics.Prefix)
}

// OnAgentStop stops publishing, lets running commands finish (bounded by
// ctx), says "stopped", disconnects and stops the embedded broker.
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
	err := rs.handlers.close(ctx)
	if rs.conn.client.IsConnectionOpen() {
		tok := rs.conn.client.Publish(p.topics.Status, 1, true, []byte("stopped"))
		if werr := wait(context.WithoutCancel(ctx), tok, time.Second); werr != nil {
			p.log.Warn("MQTT: could not publish stopped", "err", werr)
		}
	}
	rs.conn.client.Disconnect(250)
	if rs.broker != nil {
		rs.broker.Drain(min(500*time.Millisecond, time.Until(deadline(ctx))))
		err = errors.Join(err, rs.broker.Close())
	}
	return err
}

func deadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Hour)
}

// Status is the "mqtt" component of agent.status.
func (p *Plane) Status() any {
	rs := p.current()
	if rs == nil {
		return map[string]any{"connected": false, "state": "stopped"}
	}
	return struct {
		connStats
		Embedded bool   `json:"embedded_broker"`
		Admin    bool   `json:"admin_topic"`
		Commands uint64 `json:"commands"`
		BadInput uint64 `json:"bad_input"`
	}{rs.conn.stats(), rs.broker != nil, rs.admin, p.commands.Load(), p.badInput.Load()}
}

// publish sends (or buffers) a message; it reports whether it was buffered.
func (p *Plane) publish(topic string, payload []byte, qos byte, retain bool) (queued bool, err error) {
	rs := p.current()
	if rs == nil {
		return false, &RequestError{Code: CodeUnavailable, Msg: "MQTT is not running"}
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
			p.onCommand(rs, msg, source{})
		case p.topics.Admin:
			if rs.admin {
				p.onCommand(rs, msg, source{admin: true})
			} else if !msg.Retained() {
				p.refuseAdmin(rs, msg)
			}
		case p.topics.HAStatus:
			if string(msg.Payload()) == "online" {
				p.publishDiscovery(rs) // Home Assistant restarted: announce again
				rs.republish.Store(true)
			}
		default:
			p.routeFleet(rs, msg)
		}
		msg.Ack()
	}
}

// refuseAdmin answers a request on the admin topic of a broker whose ACL
// we do not know: anyone may be able to publish there.
func (p *Plane) refuseAdmin(rs *runState, msg paho.Message) {
	id, replyTo := peekIDs(msg.Payload()[:min(len(msg.Payload()), MaxPayload)])
	p.rejectInput(rs, msg.Topic(), &RequestError{ID: id, ReplyTo: replyTo, Code: tools.CodeForbidden,
		Msg: "the admin topic is not accepted through " + rs.conn.broker + ": its ACL is not ours to trust " +
			"(set plugins.mqtt.trust_broker_acl once only administrators may publish to " + p.topics.Admin + ")"})
}

// onEstop: any payload triggers the e-stop, at once and synchronously (the
// node's critical handlers stop the actuators before we return);
// {"reset":true} asks for estop.reset with the mqtt caller's permissions.
func (p *Plane) onEstop(rs *runState, msg paho.Message) {
	payload := msg.Payload()
	if msg.Retained() {
		// A retained message is history replayed on subscribe, not a
		// request: acting on it would re-latch after every reconnect.
		p.log.Warn("ignoring a retained message on the e-stop topic (clear it: publish an empty retained message)", "topic", msg.Topic())
		return
	}
	var req struct {
		Reset   bool   `json:"reset"`
		ID      string `json:"id"`
		ReplyTo string `json:"reply_to"`
	}
	if len(payload) <= MaxPayload && json.Unmarshal(payload, &req) == nil && req.Reset {
		replyTo := p.topics.Reply
		if req.ReplyTo != "" && p.topics.checkReplyTo(req.ReplyTo) == nil {
			replyTo = req.ReplyTo
		}
		ctx, cancel := context.WithTimeout(rs.ctx, p.opts.CommandTimeout)
		defer cancel()
		res, err := p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Tool: "estop.reset"})
		if err != nil {
			p.log.Warn("e-stop reset over MQTT refused", "err", err)
		}
		p.sendReply(rs, replyTo, replyFor(req.ID, res, err))
		return
	}
	data := map[string]any{"bytes": len(payload)}
	if len(payload) <= 64 && utf8.Valid(payload) {
		data["payload"] = string(payload)
	}
	p.d.Host.Raise(worldmodel.Event{Kind: "estop", Source: "mqtt", Priority: worldmodel.Critical,
		Message: "e-stop requested over MQTT", Data: data})
}

// onCommand handles one request on the cmd, admin or a fleet topic.
func (p *Plane) onCommand(rs *runState, msg paho.Message, src source) {
	if msg.Retained() {
		p.log.Warn("ignoring a retained command (replayed on subscribe, not sent now)", "topic", msg.Topic())
		return
	}
	cmd, err := DecodeCommand(msg.Payload())
	if err != nil {
		p.rejectInput(rs, msg.Topic(), err)
		return
	}
	replyTo := p.topics.Reply
	if cmd.ReplyTo != "" {
		if err := p.topics.checkReplyTo(cmd.ReplyTo); err != nil {
			p.rejectInput(rs, msg.Topic(), &RequestError{ID: cmd.ID, Code: CodeBadRequest, Msg: err.Error()})
			return
		}
		replyTo = cmd.ReplyTo
	}
	if src.fleet {
		if err := p.fleetAllows(cmd); err != nil {
			p.rejectInput(rs, msg.Topic(), err)
			return
		}
	}
	// At least once: a command redelivered after a lost acknowledgement is
	// answered again, not executed again.
	if msg.Duplicate() {
		if data, ok := rs.recent.get(cmd.ID); ok {
			if data != nil { // nil: still running, its reply is on the way
				rs.conn.publish(message{topic: replyTo, payload: data, qos: byte(p.m.QoS)})
			}
			return
		}
	}
	rs.recent.put(cmd.ID, nil)
	p.commands.Add(1)
	var grants []string
	if src.admin {
		grants = []string{"admin"}
	}
	rs.recent.put(cmd.ID, p.sendReply(rs, replyTo, p.execute(rs, cmd, grants)))
}

// execute runs a decoded command once a slot is free.
func (p *Plane) execute(rs *runState, cmd Command, grants []string) Reply {
	wait := time.NewTimer(5 * time.Second)
	defer wait.Stop()
	select {
	case p.sem <- struct{}{}:
		defer func() { <-p.sem }()
	case <-wait.C:
		return replyFor(cmd.ID, nil, &RequestError{Code: CodeBusy, Msg: fmt.Sprintf("busy: %d commands in flight", cap(p.sem))})
	case <-rs.ctx.Done():
		return replyFor(cmd.ID, nil, &RequestError{Code: CodeUnavailable, Msg: "the agent is stopping"})
	}
	ctx, cancel := context.WithTimeout(rs.ctx, p.opts.CommandTimeout)
	defer cancel()
	switch {
	case cmd.Tool != "":
		res, err := p.d.Tools.Invoke(ctx, tools.Call{Caller: "mqtt", Grants: grants, Tool: cmd.Tool, Params: cmd.Params})
		return replyFor(cmd.ID, res, err)
	case cmd.Text != "":
		return p.textCommand(ctx, cmd, grants)
	}
	res, err := p.adminOp(ctx, rs, cmd, grants)
	return replyFor(cmd.ID, res, err)
}

// textCommand hands a sentence to the agent loop (the decision engine when
// there is one) and reports the outcome; a failed step fails the reply.
func (p *Plane) textCommand(ctx context.Context, cmd Command, grants []string) Reply {
	out, err := p.d.Agent.Submit(ctx, agent.Command{ID: cmd.ID, Caller: "mqtt", Grants: grants, Text: cmd.Text})
	if err != nil {
		r := replyFor(cmd.ID, nil, err)
		if strings.HasPrefix(err.Error(), "no decision engine") { // the loop's words; it has no sentinel error
			r.Code = CodeNoEngine
		}
		if out.Decision != nil || len(out.Steps) > 0 {
			r.Result = out
		}
		return r
	}
	for _, s := range out.Steps {
		if !s.OK() {
			r := replyFor(cmd.ID, nil, &RequestError{Code: s.Code, Msg: fmt.Sprintf("step %s (%s): %s", s.ID, s.Tool, s.Error)})
			r.Result = out
			return r
		}
	}
	return replyFor(cmd.ID, out, nil)
}

func (p *Plane) sendReply(rs *runState, topic string, r Reply) []byte {
	r.Robot = p.d.Board.Device.ID
	data, err := json.Marshal(r)
	if err != nil {
		// A tool returned something JSON cannot carry: say so instead.
		data, _ = json.Marshal(replyFor(deref(r.ID), nil, fmt.Errorf("result is not JSON-encodable: %v", err)))
	}
	rs.conn.publish(message{topic: topic, payload: data, qos: byte(p.m.QoS)})
	return data
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// rejectInput answers bad input: an error reply carrying the id when one
// could be read (to the default reply topic when reply_to was the problem),
// and a rate-limited log line.
func (p *Plane) rejectInput(rs *runState, topic string, err error) {
	p.badInput.Add(1)
	re := &RequestError{Code: CodeBadRequest, Msg: err.Error()}
	errors.As(err, &re)
	if p.logLimit.allow() {
		p.log.Warn("bad MQTT input", "topic", topic, "id", re.ID, "err", re.Msg)
	}
	replyTo := p.topics.Reply
	if re.ReplyTo != "" && p.topics.checkReplyTo(re.ReplyTo) == nil {
		replyTo = re.ReplyTo
	}
	p.sendReply(rs, replyTo, replyFor(re.ID, nil, re))
}

// AfterPlan publishes decisions that failed before acting (no decision
// engine, an invalid plan); the others arrive as world-model "decision"
// events with their traces and are published by the pump.
func (p *Plane) AfterPlan(_ context.Context, d hooks.Decision) error {
	if d.Err == nil {
		return nil
	}
	data, err := json.Marshal(map[string]any{"time": time.Now(), "cycle": d.Cycle, "path": d.Path, "ok": false, "error": d.Err.Error()})
	if err != nil {
		return err
	}
	_, err = p.publish(p.topics.Decisions, data, byte(p.m.QoS), false)
	if errors.As(err, new(*RequestError)) {
		return nil // not running: nothing to tell
	}
	return err
}

// tracker counts running handlers and refuses new ones once closed.
type tracker struct {
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
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
	done := make(chan struct{})
	go func() { t.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("mqtt: handlers still running at stop: %w", ctx.Err())
	}
}

// recentReplies remembers the last replies by command id, for redelivered
// commands.
type recentReplies struct {
	mu    sync.Mutex
	byID  map[string][]byte
	order []string
	next  int
}

func newRecentReplies(n int) *recentReplies {
	return &recentReplies{byID: make(map[string][]byte, n), order: make([]string, n)}
}

func (r *recentReplies) put(id string, reply []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byID[id]; !ok {
		delete(r.byID, r.order[r.next])
		r.order[r.next] = id
		r.next = (r.next + 1) % len(r.order)
	}
	r.byID[id] = reply
}

func (r *recentReplies) get(id string) ([]byte, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b, ok := r.byID[id]
	return b, ok
}

// rateLimit lets a log line through at most once a second, so a flood of
// bad input or a broker that is down cannot fill a Pi's SD card.
type rateLimit struct{ last atomic.Int64 }

func (r *rateLimit) allow() bool {
	now := time.Now().UnixNano()
	last := r.last.Load()
	return now-last >= int64(time.Second) && r.last.CompareAndSwap(last, now)
}
