// Package broker is the embedded MQTT broker (mochi-mqtt) the control
// plane starts when the board asks for one: the sim board's default, so
// nothing needs installing. Around mochi it keeps the door (its own
// listener: connect deadline, keepalive for clients without one, caps per
// address and in total, a close that leaves no connection hanging), an
// inbox that makes a command it acknowledged survive the agent's SIGKILL,
// authentication against bcrypt hashes with every user confined to the
// device's topics, and the count of what it drops. Probe tells whether
// another broker already answers on its port.
package broker

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
	"golang.org/x/crypto/bcrypt"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/lograte"
	"github.com/edgeagent/edgeagent/internal/netaddr"
)

// Config configures the embedded broker.
type Config struct {
	Listen string // host:port; port 0 picks a free one
	Users  []User // empty: no authentication, loopback only
	ACL    ACL    // where users may read and publish
	Log    *slog.Logger
	Limits Limits
	Clock  clock.Clock // default: the wall clock
	// Store, when set, keeps the commands the broker acknowledged until
	// the agent has them (the inbox); Takes names their topics.
	Store Store
	Takes func(topic string) bool
	// Oversized, when set, is handed the head of a message the broker
	// refused for its size (the topic, the payload's first OversizedHead
	// bytes, the packet's size) when its publisher may publish there; it
	// says whether it answered it (and logged it). The plane asks for as
	// much as it reads a command's id from (its 64 KiB command limit).
	Oversized     func(topic string, head []byte, size int) bool
	OversizedHead int
}

// User is an account on the embedded broker (a bcrypt hash, never a password).
type User struct {
	Username, PasswordBcrypt string
	Admin                    bool
}

// ACL confines the users to one device: everyone may read under Prefix
// and under Discovery/ (Home Assistant's; "" for none); admin users may
// publish there too, plain users only to the topics in Publish (commands,
// e-stops, Home Assistant's status).
type ACL struct {
	Prefix, Discovery string
	Publish           []string
}

// Store is the part of the agent's store the inbox needs (store.Store is
// one; store.Memory in tests).
type Store interface {
	Update(bucket string, put map[string]any, del []string) error
	ForEach(bucket string, fn func(key string, value json.RawMessage) error) error
}

// Broker is the embedded MQTT broker (mochi-mqtt): the sim board's default,
// so nothing needs installing. It never listens beyond loopback without
// authentication, and with authentication every client is confined to the
// device's prefix and Home Assistant's discovery prefix.
type Broker struct {
	srv   *mochi.Server
	ln    *listener
	inbox *inbox // nil without a store
	addr  string
	close sync.Once
	clock clock.Clock
	drops *dropHook
	// The agent's own client logs in with a random secret that lives only
	// in this process, so it needs no entry in the board's users.
	internalUser, internalPass string
}

// ErrAddrInUse is returned by Start when the listen address is taken.
var ErrAddrInUse = errors.New("address already in use")

// Start starts the embedded broker.
func Start(cfg Config) (*Broker, error) {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("embedded broker: listen %q: %w", cfg.Listen, err)
	}
	if !netaddr.IsLoopback(host) && len(cfg.Users) == 0 {
		// board.Load refuses this too; this is the last line.
		return nil, fmt.Errorf("embedded broker: refusing to listen on %s without authentication (add mqtt.users or listen on 127.0.0.1)", cfg.Listen)
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	b := &Broker{internalUser: "edgeagent-internal", internalPass: rand.Text(), clock: clock.Or(cfg.Clock)}
	hook := &authHook{b: b, acl: cfg.ACL, users: map[string]User{}}
	for _, u := range cfg.Users {
		hook.users[u.Username] = u
	}
	caps := mochi.NewDefaultServerCapabilities()
	caps.MaximumPacketSize = maxPacket
	caps.MaximumSessionExpiryInterval = 24 * 3600
	// mochi acknowledges a publisher's QoS 1 message before it forwards
	// it, and drops (silently, but for a counter) what does not fit in a
	// subscriber's inflight store or write queue: a flood of commands
	// faster than the agent acknowledges them lost 12-30 % at 10k/s when
	// the agent read without bound. The agent now keeps what it leaves
	// unacknowledged below its queue + max_inflight and answers the rest
	// busy, so the inflight store (a map, grown on use) gets the room of
	// MQTT's whole packet-id space and the write queue mochi's default:
	// it is a channel allocated whole for every client that connects, and
	// 65,536 slots cost 512 KB per connection (each CLI invoke) for no
	// gain: 0 lost at 10k/s for 3 s with either (TestChaosFloodEmbedded).
	// What is dropped all the same is counted in agent.status and logged.
	caps.MaximumInflight = 65535
	caps.MaximumClientWritesPending = 1 << 13
	b.srv = mochi.New(&mochi.Options{
		Capabilities: caps,
		// mochi logs every connection at info and every client that goes
		// away at warn; only its errors are news.
		Logger:                 slog.New(minLevel{log.Handler(), slog.LevelError}).With("component", "mqtt-broker"),
		SysTopicResendInterval: 60,
		InlineClient:           cfg.Store != nil, // the inbox forwards through it
	})
	if cfg.Store != nil {
		b.inbox = newInbox(cfg.Store, cfg.Takes, b.clock, log)
		b.inbox.srv = b.srv
		if err := b.srv.AddHook(&inboxHook{in: b.inbox}, nil); err != nil {
			return nil, err
		}
	}
	if err := b.srv.AddHook(hook, nil); err != nil {
		return nil, err
	}
	b.drops = &dropHook{log: log, clock: b.clock, acl: hook.OnACLCheck, oversized: cfg.Oversized}
	if err := b.srv.AddHook(b.drops, nil); err != nil {
		return nil, err
	}
	tcp := newListener("edgeagent", cfg.Listen, cfg.Limits)
	tcp.clients = b.srv
	tcp.headMax = cfg.OversizedHead + headRoom
	b.ln = tcp
	if err := b.srv.AddHook(&connHook{l: tcp}, nil); err != nil {
		return nil, err
	}
	if err := b.srv.AddListener(tcp); err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("embedded broker: %s: %w", cfg.Listen, ErrAddrInUse)
		}
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	b.addr = tcp.Address()
	if err := b.srv.Serve(); err != nil {
		_ = b.srv.Close()
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	if b.inbox != nil {
		go b.inbox.run() // ended by Close
	}
	return b, nil
}

// Dropped counts the messages the broker could not deliver: a client's
// write queue or inflight store was full, or its packet ids ran out, or
// the packet was over the size limit.
func (b *Broker) Dropped() int64 {
	return atomic.LoadInt64(&b.srv.Info.MessagesDropped) + atomic.LoadInt64(&b.srv.Info.InflightDropped) + b.drops.tooLarge.Load()
}

// Conns are the connection refusals and timeouts of the broker's door.
func (b *Broker) Conns() Conns { return b.ln.stats() }

// dropHook logs what mochi drops (mochi's own warning is below the level
// we let through from it), at most once a second.
type dropHook struct {
	mochi.HookBase
	log      *slog.Logger
	clock    clock.Clock
	limit    lograte.Limit
	tooLarge atomic.Int64 // packets over MaximumPacketSize

	acl       func(cl *mochi.Client, topic string, write bool) bool
	oversized func(topic string, head []byte, size int) bool // Config.Oversized
}

func (h *dropHook) ID() string { return "edgeagent-drops" }

func (h *dropHook) Provides(b byte) bool {
	return b == mochi.OnPublishDropped || b == mochi.OnDisconnect
}

// OnDisconnect sees a packet over MaximumPacketSize: mochi refuses it
// from its fixed header and closes the connection, which the client sees
// only as a disconnect. It is counted with the drops; when it was a
// PUBLISH its head (see sizeTap) goes to the agent, which answers it as a
// command too large if it is one; else it is logged here.
func (h *dropHook) OnDisconnect(cl *mochi.Client, err error, _ bool) {
	if !errors.Is(err, packets.ErrPacketTooLarge) {
		return
	}
	h.tooLarge.Add(1)
	if h.handOver(cl) {
		return
	}
	if h.limit.Allow(h.clock.Now()) {
		h.log.Warn("embedded broker refused a packet over its 1 MiB limit and closed the client's connection (counted in agent.status as broker_dropped)",
			"client", cl.ID, "remote", cl.Net.Remote)
	}
}

// handOver gives the head of a refused PUBLISH to Config.Oversized,
// if its publisher may publish on its topic.
func (h *dropHook) handOver(cl *mochi.Client) bool {
	tap, ok := cl.Net.Conn.(*sizeTap)
	if !ok || h.oversized == nil {
		return false
	}
	big := tap.oversized()
	if big == nil {
		return false
	}
	topic, head, ok := big.parse(cl.Properties.ProtocolVersion == 5)
	return ok && h.acl(cl, topic, true) && h.oversized(topic, head, big.size)
}

func (h *dropHook) OnPublishDropped(cl *mochi.Client, pk packets.Packet) {
	if h.limit.Allow(h.clock.Now()) {
		h.log.Warn("embedded broker dropped a message: the client's queue is full (counted in agent.status as broker_dropped)",
			"client", cl.ID, "topic", pk.TopicName)
	}
}

// Addr is the address the broker listens on (with the real port).
func (b *Broker) Addr() string { return b.addr }

// URL is what a client on this machine dials.
func (b *Broker) URL() string { return "tcp://" + netaddr.Dialable(b.addr) }

// Login is the user and password of the agent's own client: a random
// secret that lives only in this process, so that the agent needs no entry
// in the board's users (without users nobody needs to log in).
func (b *Broker) Login() (user, password string) { return b.internalUser, b.internalPass }

// Close disconnects every client (their last wills are sent) and stops.
// Closing twice is harmless.
func (b *Broker) Close() (err error) {
	b.close.Do(func() {
		err = b.srv.Close()
		if b.inbox != nil {
			b.inbox.close()
		}
	})
	return err
}

// Settled tells the inbox that the agent has acknowledged a command.
func (b *Broker) Settled(topic string, payload []byte) {
	if b.inbox != nil {
		b.inbox.settled(topic, payload)
	}
}

// Redeliver forwards the commands the previous run acknowledged and the
// agent never acknowledged; the agent calls it once subscribed.
func (b *Broker) Redeliver() int {
	if b.inbox == nil {
		return 0
	}
	return b.inbox.redeliver()
}

// Drain waits, until ctx ends, for what the agent's own client (publisher,
// its client id) published last, the "stopped" status, to reach the
// subscribers before the broker goes away (Home Assistant's above all).
// mochi acknowledges a QoS 1 message before it hands it to the
// subscribers, so the agent's PUBACK does not say it is queued anywhere
// yet; mochi handles a client's packets in order, so once the agent's
// connection has ended (it disconnects before Drain) everything it sent
// is queued. Then Drain waits until no connected client has QoS 1
// messages waiting for its acknowledgement.
func (b *Broker) Drain(ctx context.Context, publisher string) {
	for ctx.Err() == nil && b.draining(publisher) {
		_ = clock.Sleep(ctx, b.clock, 2*time.Millisecond)
	}
}

// draining reports whether publisher is still connected or a connected
// client still has QoS 1 messages unacknowledged.
func (b *Broker) draining(publisher string) bool {
	for _, cl := range b.srv.Clients.GetAll() {
		if cl.Net.Inline || cl.Closed() {
			continue
		}
		if cl.ID == publisher || cl.State.Inflight.Len() > 0 {
			return true
		}
	}
	return false
}

// authHook authenticates against bcrypt hashes and confines users to the
// device: everyone may read <prefix>… and <discovery>/…; plain users may
// publish commands and e-stops and Home Assistant's status; admin users may
// publish anywhere under both prefixes (the admin topic included). Without
// users (loopback only) every local client is let in: on the robot itself,
// a shell already reaches further than MQTT does.
type authHook struct {
	mochi.HookBase
	b     *Broker
	acl   ACL
	users map[string]User
}

func (h *authHook) ID() string { return "edgeagent-auth" }

func (h *authHook) Provides(b byte) bool {
	return b == mochi.OnConnectAuthenticate || b == mochi.OnACLCheck
}

func (h *authHook) OnConnectAuthenticate(cl *mochi.Client, pk packets.Packet) bool {
	if len(h.users) == 0 {
		return true
	}
	user, pass := string(pk.Connect.Username), pk.Connect.Password
	if user == h.b.internalUser {
		return subtle.ConstantTimeCompare(pass, []byte(h.b.internalPass)) == 1
	}
	u, ok := h.users[user]
	return ok && bcrypt.CompareHashAndPassword([]byte(u.PasswordBcrypt), pass) == nil
}

func (h *authHook) OnACLCheck(cl *mochi.Client, topic string, write bool) bool {
	if len(h.users) == 0 || string(cl.Properties.Username) == h.b.internalUser {
		return true
	}
	u, ok := h.users[string(cl.Properties.Username)]
	if !ok {
		return false
	}
	a := h.acl
	underDevice := strings.HasPrefix(topic, a.Prefix)
	underHA := a.Discovery != "" && strings.HasPrefix(topic, a.Discovery+"/")
	if !write || u.Admin {
		return underDevice || underHA
	}
	return slices.Contains(a.Publish, topic)
}

// minLevel drops records below a level.
type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(a), m.min}
}
func (m minLevel) WithGroup(g string) slog.Handler { return minLevel{m.Handler.WithGroup(g), m.min} }

// Probe tells whether an MQTT broker answers at addr: it sends a CONNECT
// and looks for a CONNACK (even one refusing us, which still means a
// broker). The plane uses it when the embedded broker's port is taken,
// typically by the mosquitto that Home Assistant users already run.
func Probe(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", netaddr.Dialable(addr), timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	id := "edgeagent-probe-" + rand.Text()[:8]
	var pkt bytes.Buffer
	body := []byte{0, 4, 'M', 'Q', 'T', 'T', 4, 0x02, 0, 10, 0, byte(len(id))}
	body = append(body, id...)
	pkt.WriteByte(0x10)
	pkt.WriteByte(byte(len(body)))
	pkt.Write(body)
	if _, err := c.Write(pkt.Bytes()); err != nil {
		return err
	}
	ack := make([]byte, 4)
	if _, err := io.ReadFull(c, ack); err != nil {
		return fmt.Errorf("no MQTT answer: %w", err)
	}
	if ack[0] != 0x20 || ack[1] != 2 {
		return fmt.Errorf("not an MQTT broker (answered % x)", ack)
	}
	_, _ = c.Write([]byte{0xe0, 0})
	return nil
}
