package mqtt

import (
	"fmt"
	"sync"
	"sync/atomic"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/eclipse/paho.mqtt.golang/packets"
)

// message is one outbound publication.
type message struct {
	topic   string
	payload []byte
	qos     byte
	retain  bool
}

// outbox is the bounded buffer of messages published while disconnected:
// when full, the oldest message makes room and is counted as dropped. paho
// would otherwise keep QoS 1 messages without bound and silently drop QoS 0
// ones while it reconnects.
type outbox struct {
	buf     []message
	head, n int
	dropped uint64
}

func newOutbox(capacity int) *outbox { return &outbox{buf: make([]message, max(capacity, 0))} }

func (o *outbox) push(m message) {
	if len(o.buf) == 0 {
		o.dropped++
		return
	}
	if o.n == len(o.buf) {
		o.buf[o.head] = message{}
		o.head = (o.head + 1) % len(o.buf)
		o.n--
		o.dropped++
	}
	o.buf[(o.head+o.n)%len(o.buf)] = m
	o.n++
}

// drain returns the buffered messages, oldest first, and empties the buffer.
func (o *outbox) drain() []message {
	out := make([]message, o.n)
	for i := range out {
		j := (o.head + i) % len(o.buf)
		out[i] = o.buf[j]
		o.buf[j] = message{}
	}
	o.head, o.n = 0, 0
	return out
}

// conn is the paho client plus the outbound buffer and counters.
type conn struct {
	client paho.Client
	broker string

	mu  sync.Mutex // orders buffering against the flush on (re)connect
	box *outbox

	published atomic.Uint64
	failed    atomic.Uint64
	received  atomic.Uint64
	connects  atomic.Uint64
	lastErr   atomic.Pointer[string]
}

// connStats is the "mqtt" component of agent.status.
type connStats struct {
	Connected bool   `json:"connected"`
	Broker    string `json:"broker"`
	Connects  uint64 `json:"connects"` // connections set up (subscribed), reconnects included
	Published uint64 `json:"published"`
	Received  uint64 `json:"received"`
	Buffered  int    `json:"buffered"` // waiting for the connection
	Dropped   uint64 `json:"dropped"`  // buffer overflow: oldest first
	Failed    uint64 `json:"failed"`   // publishes paho refused
	LastError string `json:"last_error,omitempty"`
}

func (c *conn) stats() connStats {
	c.mu.Lock()
	buffered, dropped := c.box.n, c.box.dropped
	c.mu.Unlock()
	s := connStats{
		Connected: c.client.IsConnectionOpen(), Broker: c.broker, Connects: c.connects.Load(),
		Published: c.published.Load(), Received: c.received.Load(),
		Buffered: buffered, Dropped: dropped, Failed: c.failed.Load(),
	}
	if e := c.lastErr.Load(); e != nil {
		s.LastError = *e
	}
	return s
}

func (c *conn) setErr(err error) {
	s := err.Error()
	c.lastErr.Store(&s)
}

// publish sends m now when the connection is open, otherwise buffers it.
// It never blocks on the network for long: paho's WriteTimeout bounds the
// hand-over and completion is not awaited (at QoS 1 paho retries on its own).
func (c *conn) publish(m message) (queued bool) {
	c.mu.Lock()
	if !c.client.IsConnectionOpen() {
		c.box.push(m)
		c.mu.Unlock()
		return true
	}
	// paho reports the connection open before OnConnect has flushed: what
	// was buffered goes first, or an older retained state would land after
	// a newer one.
	c.flushLocked()
	c.mu.Unlock()
	c.send(m)
	return false
}

func (c *conn) send(m message) paho.Token {
	tok := c.client.Publish(m.topic, m.qos, m.retain, m.payload)
	select {
	case <-tok.Done(): // refused at once (not connected, write timeout …)
		if err := tok.Error(); err != nil {
			c.failed.Add(1)
			c.setErr(fmt.Errorf("publish %s: %w", m.topic, err))
			return tok
		}
	default:
	}
	c.published.Add(1)
	return tok
}

// flush sends what was buffered while disconnected, oldest first. It holds
// the buffer lock so that nothing published meanwhile overtakes it.
func (c *conn) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushLocked()
}

func (c *conn) flushLocked() {
	for _, m := range c.box.drain() {
		c.send(m)
	}
}

// copyingStore is paho's memory store, except that it keeps its own copy
// of each PUBLISH packet and hands out copies. paho stores the very packet
// its writer is about to serialise (which sets fields while packing), and
// on every connect with a persistent session resume() reads the stored
// packets and sets DUP on them, concurrently with messages published from
// OnConnect being written: a data race in paho 1.5.1. With copies, the
// worst case is a duplicate at QoS 1, which receivers tolerate (and our
// command handler answers from its cache).
type copyingStore struct{ *paho.MemoryStore }

func copyPublish(p packets.ControlPacket) packets.ControlPacket {
	if pub, ok := p.(*packets.PublishPacket); ok {
		c := *pub
		return &c
	}
	return p
}

func (s copyingStore) Put(key string, p packets.ControlPacket) {
	s.MemoryStore.Put(key, copyPublish(p))
}
func (s copyingStore) Get(key string) packets.ControlPacket {
	return copyPublish(s.MemoryStore.Get(key))
}
