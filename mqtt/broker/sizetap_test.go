package broker

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"
)

// packet frames one MQTT packet: type and flags, remaining length, body.
func packet(kindFlags byte, body []byte, declared int) []byte {
	out := append([]byte{kindFlags}, binary.AppendUvarint(nil, uint64(declared))...)
	return append(out, body...)
}

func publishBody(topic string, id uint16, props []byte, payload string) []byte {
	b := binary.BigEndian.AppendUint16(nil, uint16(len(topic)))
	b = append(b, topic...)
	if id != 0 {
		b = binary.BigEndian.AppendUint16(b, id)
	}
	if props != nil {
		b = append(binary.AppendUvarint(b, uint64(len(props))), props...)
	}
	return append(b, payload...)
}

// chunked is a client's side of a connection that arrives a few bytes at
// a time, so that headers are cut anywhere.
type chunked struct {
	net.Conn
	r    io.Reader
	step int
}

func (c *chunked) Read(p []byte) (int, error) {
	c.step = c.step%7 + 1
	return c.r.Read(p[:min(len(p), c.step)])
}

// TestSizeTap: the tap passes packets under the limit through, whatever
// the reads cut, and stops right after the fixed header of a PUBLISH over
// it, keeping its head.
func TestSizeTap(t *testing.T) {
	small := packet(0x32, publishBody("a/b", 7, nil, "hi"), len(publishBody("a/b", 7, nil, "hi")))
	var stream []byte
	stream = append(stream, packet(0x10, make([]byte, 200), 200)...) // CONNECT
	stream = append(stream, small...)
	stream = append(stream, 0xc0, 0x00) // PINGREQ
	front := len(stream)
	payload := `{"id":"z","pad":"` + strings.Repeat("x", 100<<10) + `"}`
	big := packet(0x32, publishBody("t/cmd", 9, nil, payload), 3<<20)
	stream = append(stream, big...)
	header := front + len(big) - len(publishBody("t/cmd", 9, nil, payload))

	const headMax = 64<<10 + headRoom
	tap := newSizeTap(&chunked{r: bytes.NewReader(stream)}, 1<<20, headMax)
	var passed []byte
	buf := make([]byte, 64)
	for tap.oversized() == nil {
		n, err := tap.Read(buf)
		passed = append(passed, buf[:n]...)
		if err != nil {
			t.Fatalf("after %d bytes: %v", len(passed), err)
		}
	}
	if !bytes.Equal(passed, stream[:header]) {
		t.Fatalf("passed %d bytes, want the %d up to the big packet's header", len(passed), header)
	}
	b := tap.oversized()
	topic, head, ok := b.parse(false)
	if !ok || topic != "t/cmd" || b.size != 3<<20 || len(b.head) != headMax || !bytes.HasPrefix(head, []byte(`{"id":"z"`)) {
		t.Fatalf("ok %v topic %q size %d head %d bytes", ok, topic, b.size, len(b.head))
	}
}

// TestSizeTapFirstPacket: a big first packet is not kept: it comes before
// the client is authenticated.
func TestSizeTapFirstPacket(t *testing.T) {
	tap := newSizeTap(&chunked{r: bytes.NewReader(packet(0x30, publishBody("t", 0, nil, "{}"), 2<<20))}, 1<<20, 64<<10)
	buf := make([]byte, 64)
	for {
		if _, err := tap.Read(buf); err != nil {
			break
		}
	}
	if tap.oversized() != nil {
		t.Fatal("kept the head of a first packet")
	}
}

func TestBigPublishParse(t *testing.T) {
	v5 := publishBody("t/cmd", 3, []byte{0x01, 0x01, 0x23, 0x00, 0x05}, `{"id":"v5"}`)
	cases := []struct {
		name    string
		flags   byte
		head    []byte
		v5, ok  bool
		payload string
	}{
		{"3.1.1 QoS 0", 0x00, publishBody("t/cmd", 0, nil, `{"id":"a"}`), false, true, `{"id":"a"}`},
		{"3.1.1 QoS 1", 0x02, publishBody("t/cmd", 1, nil, `{"id":"b"}`), false, true, `{"id":"b"}`},
		{"5 with properties", 0x02, v5, true, true, `{"id":"v5"}`},
		{"cut in the topic", 0x00, publishBody("t/cmd", 0, nil, "")[:4], false, false, ""},
		{"cut in the packet id", 0x02, append(publishBody("t/cmd", 0, nil, ""), 0x00), false, false, ""},
		{"cut in the properties", 0x02, v5[:11], true, false, ""},
		{"empty", 0x00, nil, false, false, ""},
	}
	for _, c := range cases {
		topic, payload, ok := (&bigPublish{flags: c.flags, head: c.head}).parse(c.v5)
		if ok != c.ok || ok && (topic != "t/cmd" || string(payload) != c.payload) {
			t.Errorf("%s: %q %q %v", c.name, topic, payload, ok)
		}
	}
}

// BenchmarkBrokerBigPacket: what one packet on a fresh connection costs
// the embedded broker in memory (B/op, every goroutine's allocations).
// Under its limit mochi reads a packet whole (1 MiB: 3.2 MB); over it,
// only the tap's head is kept, whatever size the packet declares (0.28 MB
// with the connection's own). Raising the limit so that the agent reads a
// 2 MiB command would let each connection cost ~6 MB instead:
//
//	go test -run '^$' -bench BrokerBigPacket -benchmem ./mqtt/broker
func BenchmarkBrokerBigPacket(b *testing.B) {
	br, err := Start(Config{Listen: "127.0.0.1:0", ACL: ACL{Prefix: "edgeagent/bench-bot/", Publish: []string{"edgeagent/bench-bot/cmd"}}, Log: quiet,
		Oversized: func(string, []byte, int) bool { return true }, OversizedHead: 64 << 10})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Close()
	body := publishBody("edgeagent/bench-bot/cmd", 1, nil, `{"id":"1","pad":"`+strings.Repeat("x", 128<<10)+`"}`)
	for _, c := range []struct {
		name     string
		declared int
	}{{"128KiB-under-limit", len(body)}, {"1MiB-under-limit", maxPacket - 8}, {"2MiB-over-limit", 2 << 20}, {"64MiB-over-limit", 64 << 20}} {
		b.Run(c.name, func(b *testing.B) {
			pk := packet(0x32, body, c.declared)
			if c.declared < maxPacket {
				pk = append(pk, make([]byte, c.declared-len(body))...)
			}
			b.ReportAllocs()
			for b.Loop() {
				sendRaw(b, br.Addr(), pk, c.declared < maxPacket)
			}
		})
	}
}

// sendRaw connects, publishes pk and waits for its PUBACK (acked) or for
// the broker to close the connection.
func sendRaw(b *testing.B, addr string, pk []byte, acked bool) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	connect := []byte{0, 4, 'M', 'Q', 'T', 'T', 4, 2, 0, 60, 0, 1, 'b'}
	if _, err := conn.Write(append(packet(0x10, connect, len(connect)), pk...)); err != nil && acked {
		b.Fatal(err)
	}
	reply := make([]byte, 8) // CONNACK, PUBACK
	n, err := io.ReadFull(conn, reply)
	switch {
	case acked && (err != nil || reply[4] != 0x40):
		b.Fatalf("no PUBACK: % x %v", reply[:n], err)
	case !acked && err == nil:
		b.Fatalf("not closed: % x", reply)
	}
}
