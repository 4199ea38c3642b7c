package mqtt

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"sync/atomic"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/mqtt/fleetproto"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// A broker that restarted without its saved state (persistence off, or
// killed before its first save) has forgotten the agent's session and
// with it every command it had acknowledged to a publisher and not yet
// delivered: ~1,500 a restart at 500 commands/s, and nobody was told
// (issue 31). The agent cannot get them back, but it can say so: when
// the CONNACK says the session is not present, it publishes a resync,
// once it has subscribed again, on <prefix>resync (retained, so that a
// requester that reconnects later still sees it) and as a world-model
// event. Requesters then send their unanswered commands again with the
// same ids (fleetproto.Resender); the duplicate window answers those that did run
// with their first reply, and runs the lost ones once.

// session follows what the broker said about the agent's session in its
// last CONNACK, and when the connection was lost.
type session struct {
	present atomic.Bool
	lostAt  atomic.Int64 // unix ns; the plane's start before the first connection
}

// dial opens the network connection paho would, and watches its CONNACK.
// paho reads the session-present flag and drops it on every reconnect.
func (s *session) dial(uri *url.URL, o paho.ClientOptions) (net.Conn, error) {
	d := net.Dialer{Timeout: o.ConnectTimeout}
	var c net.Conn
	var err error
	switch uri.Scheme {
	case "ssl", "tls", "mqtts", "tcps":
		c, err = (&tls.Dialer{NetDialer: &d, Config: o.TLSConfig}).Dial("tcp", uri.Host)
	case "tcp", "mqtt":
		c, err = d.Dial("tcp", uri.Host)
	default:
		return nil, fmt.Errorf("mqtt: unsupported broker scheme %q (tcp:// or ssl://)", uri.Scheme)
	}
	if err != nil {
		return nil, err
	}
	s.present.Store(false)
	return &connackConn{Conn: c, flags: func(f byte) { s.present.Store(f&1 == 1) }}, nil
}

// connackConn passes everything through and hands the flags byte of the
// first packet read, the CONNACK, to flags. paho reads the CONNACK in one
// goroutine before anything else, so the state needs no lock.
type connackConn struct {
	net.Conn
	flags func(byte)
	state int // 0: the packet type; 1: its remaining length; 2: the flags; 3: done
}

func (c *connackConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	for i := 0; i < n && c.state < 3; i++ {
		b := p[i]
		switch c.state {
		case 0:
			c.state = 1
			if b>>4 != 2 { // not a CONNACK: nothing to learn
				c.state = 3
			}
		case 1:
			if b&0x80 == 0 { // the last byte of the variable-length integer
				c.state = 2
			}
		case 2:
			c.flags(b)
			c.state = 3
		}
	}
	return n, err
}

// announceResync publishes a resync when the broker did not have the
// agent's session; onConnect calls it once subscribed. A reconnection's is
// also an event of the world model and a warning.
func (p *Plane) announceResync(rs *runState) {
	if rs.session.present.Load() {
		return
	}
	r := fleetproto.Resync{Robot: p.cfg.DeviceID, GapStart: time.Unix(0, rs.session.lostAt.Load()), GapEnd: p.d.Clock.Now()}
	data, _ := json.Marshal(r) // strings and times: always encodes
	rs.conn.send(message{topic: p.topics.Resync, payload: data, qos: 1, retain: true})
	if rs.conn.connects.Load() == 0 {
		// The first connection: a fresh embedded broker always has no
		// session, an external one lost it while the agent was away.
		p.log.Info("MQTT broker holds no session of ours: resync published", "topic", p.topics.Resync)
		return
	}
	p.d.World.Record(worldmodel.Event{Time: r.GapEnd, Kind: "resync", Source: "mqtt", Priority: worldmodel.Normal,
		Message: "the broker had lost the agent's session: commands sent between gap_start and gap_end may be lost; requesters resend what is unanswered",
		Data:    map[string]any{"gap_start": r.GapStart, "gap_end": r.GapEnd}})
	p.log.Warn("MQTT broker had lost our session: commands sent meanwhile may be lost; resync published", "gap_start", r.GapStart, "topic", p.topics.Resync)
}
