package broker

import (
	"encoding/binary"
	"io"
	"net"
)

// maxPacket is the embedded broker's packet limit: commands are ≤ 64 KiB
// (the plane's limit), and discovery of a big robot stays well below it.
const maxPacket = 1 << 20

// headRoom is what the tap keeps of a PUBLISH over maxPacket besides the
// payload's Config.OversizedHead bytes: its topic and properties.
const headRoom = 4 << 10

// sizeTap follows the MQTT packets a client sends the embedded broker.
// mochi refuses a packet over its limit from the fixed header alone and
// closes the connection, so the publisher of a 2 MB command got no answer
// (issue 31). Raising the limit would let each connection make the broker
// hold two copies of whatever size it declares; instead the tap keeps the
// head of such a PUBLISH (headMax bytes, once per connection: mochi
// closes it) so that the agent can answer it like a command it read whole.
// The rest is never read.
//
// Read runs on mochi's reading goroutine only, which then runs the
// OnDisconnect hook that takes the head: no lock is needed.
type sizeTap struct {
	net.Conn
	limit   int // a packet whose remaining length + 1 is over it is refused
	headMax int // bytes kept of a refused PUBLISH
	packets int // fixed headers seen
	body    int // bytes of the current packet still to pass through
	hdr     []byte
	lost    bool // a malformed length: mochi ends the connection anyway
	big     *bigPublish
}

// bigPublish is the head of a PUBLISH over the limit.
type bigPublish struct {
	flags byte // the fixed header's low nibble: QoS, retain, dup
	size  int  // its remaining length
	head  []byte
}

func newSizeTap(c net.Conn, limit, headMax int) *sizeTap {
	return &sizeTap{Conn: c, limit: limit, headMax: headMax, hdr: make([]byte, 0, 5)}
}

func (t *sizeTap) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	for i := 0; i < n && !t.lost; {
		if t.body > 0 {
			step := min(t.body, n-i)
			i, t.body = i+step, t.body-step
			continue
		}
		b := p[i]
		i++
		t.hdr = append(t.hdr, b)
		if len(t.hdr) == 1 || b&0x80 != 0 && len(t.hdr) < cap(t.hdr) {
			continue // the type byte, or more of the length to come
		}
		if b&0x80 != 0 {
			t.lost = true // a fifth length byte: mochi refuses it
			break
		}
		size := remainingLength(t.hdr[1:])
		kind, flags := t.hdr[0]>>4, t.hdr[0]&0x0f
		t.hdr = t.hdr[:0]
		t.packets++
		// The first packet is CONNECT; a big one is refused unauthenticated.
		if kind == 3 && size+1 > t.limit && t.packets > 1 {
			t.keep(flags, size, p[i:n])
			return i, nil // mochi reads the header, refuses, and closes
		}
		t.body = size
	}
	return n, err
}

// keep reads the head of an oversized PUBLISH whose first bytes are read.
func (t *sizeTap) keep(flags byte, size int, read []byte) {
	head := make([]byte, min(size, t.headMax))
	got := copy(head, read)
	if got < len(head) {
		// A client that stops short leaves a shorter head, still useful.
		m, _ := io.ReadFull(t.Conn, head[got:])
		got += m
	}
	t.big = &bigPublish{flags: flags, size: size, head: head[:got]}
}

// oversized is the head of the PUBLISH mochi refused, if it was one.
func (t *sizeTap) oversized() *bigPublish { return t.big }

func remainingLength(b []byte) int {
	n, shift := 0, 0
	for _, c := range b {
		n |= int(c&0x7f) << shift
		shift += 7
	}
	return n
}

// parse reads the topic and the start of the payload from the head;
// ok is false when the head ends before the payload begins.
func (b *bigPublish) parse(v5 bool) (topic string, payload []byte, ok bool) {
	h := b.head
	if len(h) < 2 {
		return "", nil, false
	}
	tl := int(binary.BigEndian.Uint16(h))
	if len(h) < 2+tl {
		return "", nil, false
	}
	topic, h = string(h[2:2+tl]), h[2+tl:]
	if qos := b.flags >> 1 & 3; qos > 0 {
		if len(h) < 2 {
			return "", nil, false
		}
		h = h[2:] // the packet id
	}
	if v5 {
		pl, n := binary.Uvarint(h) // MQTT's variable byte integer is LEB128
		if n <= 0 || uint64(len(h)-n) < pl {
			return "", nil, false
		}
		h = h[n+int(pl):]
	}
	return topic, h, true
}
