package broker

import (
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/internal/waittest"
)

// closedWithin reads c until it is closed by the broker, up to d: false
// when it is still open then.
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	buf := make([]byte, 64)
	for {
		if _, err := c.Read(buf); err != nil {
			return !errors.Is(err, os.ErrDeadlineExceeded)
		}
	}
}

// TestHalfOpenConnectionsClosed: 200 connections that send one byte of a
// CONNECT and nothing more are all closed by the connect deadline (here
// 300 ms; 10 s by default), counted, and what they held is given back:
// goroutines and heap as before. Before, the embedded broker kept them
// forever (+200 descriptors, +7.4 MB).
func TestHalfOpenConnectionsClosed(t *testing.T) {
	const n, deadline = 200, 300 * time.Millisecond
	b := start(t, Config{Listen: "127.0.0.1:0", Limits: Limits{ConnectTimeout: deadline, PerSource: 1000, Total: 1000}})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	goroutines := runtime.NumGoroutine()
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte{0x10}); err != nil { // the first byte of CONNECT
			t.Fatal(err)
		}
		conns[i] = c
	}
	// All accepted (on a loaded machine the first may time out already).
	waittest.For(t, "the broker taking them", func() bool { st := b.Conns(); return st.Open+int(st.ConnectTimeouts) == n })
	start := time.Now()
	open := 0
	for _, c := range conns {
		if !closedWithin(c, time.Until(start.Add(deadline+2*time.Second))) {
			open++
		}
	}
	if open > 0 {
		t.Fatalf("%d of %d half-open connections still open %v after the connect deadline", open, n, 2*time.Second)
	}
	waittest.For(t, "the broker letting go", func() bool { return b.Conns().Open == 0 })
	if st := b.Conns(); st.ConnectTimeouts != n {
		t.Fatalf("stats %+v, want %d connect timeouts", st, n)
	}
	waittest.For(t, "their goroutines ending", func() bool { return runtime.NumGoroutine() <= goroutines })
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap in use %+d bytes after %d half-open connections came and went", grown, n)
	if grown > 1<<20 {
		t.Fatalf("heap in use grew %d bytes", grown)
	}
}

// TestConnectionCaps: past the cap of its address, or the total, a
// connection is closed at once and counted; the others are served.
func TestConnectionCaps(t *testing.T) {
	b := start(t, Config{Listen: "127.0.0.1:0", Limits: Limits{PerSource: 3, Total: 5}})
	_, port, _ := net.SplitHostPort(b.Addr())
	dial := func(from string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	var kept []net.Conn
	for range 3 {
		kept = append(kept, dial("127.0.0.1"))
	}
	waittest.For(t, "3 held", func() bool { return b.Conns().Open == 3 })
	if c := dial("127.0.0.1"); !closedWithin(c, 2*time.Second) {
		t.Fatal("a 4th connection from one address was kept")
	}
	kept = append(kept, dial("127.0.0.2"), dial("127.0.0.3"))
	waittest.For(t, "5 held", func() bool { return b.Conns().Open == 5 })
	if c := dial("127.0.0.4"); !closedWithin(c, 2*time.Second) {
		t.Fatal("a 6th connection was kept")
	}
	st := b.Conns()
	if st.RefusedPerSource != 1 || st.RefusedTotal != 1 || st.Open != 5 {
		t.Fatalf("stats %+v", st)
	}
	// The kept ones are served: an MQTT client completes its CONNECT.
	c := kept[1]
	if _, err := c.Write(connectPacket("capped-ok")); err != nil {
		t.Fatal(err)
	}
	ack := make([]byte, 4)
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Read(ack); err != nil || ack[0] != 0x20 {
		t.Fatalf("CONNACK % x, %v", ack, err)
	}
}

// TestSilentClientClosed: a client that asked for 1 s of keepalive and
// says nothing is closed after 1.5 keepalives (mochi rounds the half down:
// 1 s) and counted; one that asked for none still gets one (maxKeepalive).
func TestSilentClientClosed(t *testing.T) {
	b := start(t, Config{Listen: "127.0.0.1:0"})
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	pkt := connectPacket("silent")
	pkt[11] = 1 // keepalive 1 s (bytes 10-11 of a 3.1.1 CONNECT: the fixed header's 2, then 8 into the variable header)
	if _, err := c.Write(pkt); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if !closedWithin(c, 5*time.Second) {
		t.Fatal("a silent client with keepalive 1 s is still open after 5 s")
	}
	t.Logf("closed %v after CONNECT", time.Since(start).Round(time.Millisecond))
	waittest.For(t, "counted", func() bool { return b.Conns().KeepaliveTimeouts == 1 })

	lazy, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer lazy.Close()
	pkt = connectPacket("lazy")
	pkt[10], pkt[11] = 0, 0 // keepalive 0: none asked for
	if _, err := lazy.Write(pkt); err != nil {
		t.Fatal(err)
	}
	waittest.For(t, "lazy connected", func() bool { _, ok := b.srv.Clients.Get("lazy"); return ok })
	if cl, _ := b.srv.Clients.Get("lazy"); cl.State.Keepalive != maxKeepalive {
		t.Fatalf("keepalive of a client that asked for none: %d", cl.State.Keepalive)
	}
}
