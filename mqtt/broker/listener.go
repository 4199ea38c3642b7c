package broker

import (
	"errors"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// listener is the embedded broker's TCP listener. mochi's own closes the
// clients it knows before it stops accepting, and drops a connection it
// accepts after that without closing it. A client reconnecting in that
// window (every client does when a config reload restarts the broker)
// either waited out its connect timeout on a socket nobody read, or was
// attached after the sweep and held the broker's Close until its
// keepalive ran out: 90 s (TestBrokerCloseLeavesNoConnectionHanging).
// This one stops accepting first, and closes every connection it handed
// to the broker that is still open once the broker has closed its clients.
//
// It also keeps the broker's door (issue 31): mochi waits for a CONNECT
// without a deadline, so a connection that sent one byte of it was kept
// forever (+200 descriptors and +7.4 MB for 200 of them). Here a
// connection must complete CONNECT within ConnectTimeout (mochi then sets
// its own deadline of 1.5 keepalives, refreshed on every packet), and
// connections are capped per source address and in total; refusals and
// timeouts are counted for agent.status.
type listener struct {
	id, addr string
	limits   Limits
	clients  *mochi.Server // whose clients Close disconnects
	headMax  int           // what a connection's sizeTap keeps of a refused PUBLISH
	ln       net.Listener
	wg       sync.WaitGroup // the connections' goroutines

	mu       sync.Mutex
	closed   bool
	conns    map[net.Conn]bool // true once CONNECT was read
	bySource map[string]int

	refusedSource, refusedTotal, connectTimeouts, keepaliveTimeouts atomic.Uint64
}

// maxKeepalive is the keepalive (seconds) of a client that asked for none:
// without one mochi sets no deadline, and a silent client stayed forever.
// MQTT 5 clients are told (server keep alive); 3.1.1 ones have no way to
// be, and are closed after 1.5 times it without a packet, as mosquitto's
// max_keepalive does.
const maxKeepalive = 300

// Limits bound the embedded broker's connections; zero fields take
// the defaults.
type Limits struct {
	// ConnectTimeout is how long a connection may take to complete its
	// CONNECT (default 10 s).
	ConnectTimeout time.Duration
	// PerSource caps the connections from one IP address (default 64),
	// Total all of them (default 256).
	PerSource, Total int
}

func (c Limits) withDefaults() Limits {
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	if c.PerSource <= 0 {
		c.PerSource = 64
	}
	if c.Total <= 0 {
		c.Total = 256
	}
	return c
}

// Conns are the listener's refusals: connections over the cap of
// their address or the total, and connections closed for not completing
// CONNECT in time.
type Conns struct {
	RefusedPerSource  uint64 `json:"refused_per_address"`
	RefusedTotal      uint64 `json:"refused_total"`
	ConnectTimeouts   uint64 `json:"connect_timeouts"`
	KeepaliveTimeouts uint64 `json:"keepalive_timeouts"`
	Open              int    `json:"open"`
}

var _ listeners.Listener = (*listener)(nil)

func newListener(id, addr string, limits Limits) *listener {
	return &listener{id: id, addr: addr, limits: limits.withDefaults(), conns: map[net.Conn]bool{}, bySource: map[string]int{}}
}

func (l *listener) stats() Conns {
	l.mu.Lock()
	open := len(l.conns)
	l.mu.Unlock()
	return Conns{RefusedPerSource: l.refusedSource.Load(), RefusedTotal: l.refusedTotal.Load(),
		ConnectTimeouts: l.connectTimeouts.Load(), KeepaliveTimeouts: l.keepaliveTimeouts.Load(), Open: open}
}

// connHook marks the connections that completed CONNECT, and gives a
// client without a keepalive the server's.
type connHook struct {
	mochi.HookBase
	l *listener
}

func (h *connHook) ID() string { return "edgeagent-conns" }

func (h *connHook) Provides(b byte) bool { return b == mochi.OnConnect }

func (h *connHook) OnConnect(cl *mochi.Client, _ packets.Packet) error {
	if cl.State.Keepalive == 0 {
		cl.State.Keepalive, cl.State.ServerKeepalive = maxKeepalive, true
	}
	h.l.mu.Lock()
	if _, ok := h.l.conns[cl.Net.Conn]; ok {
		h.l.conns[cl.Net.Conn] = true
	}
	h.l.mu.Unlock()
	return nil
}

func (l *listener) ID() string       { return l.id }
func (l *listener) Protocol() string { return "tcp" }

// Address is the address listened on, with the real port once listening.
func (l *listener) Address() string {
	if l.ln == nil {
		return l.addr
	}
	return l.ln.Addr().String()
}

// Init opens the socket, so that a taken port fails the broker's start.
func (l *listener) Init(*slog.Logger) error {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return err
	}
	l.ln = ln
	return nil
}

// Serve hands each accepted connection to the broker until Close.
func (l *listener) Serve(establish listeners.EstablishFn) {
	for {
		raw, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		var c net.Conn = newSizeTap(raw, maxPacket, l.headMax)
		src := sourceOf(c)
		switch l.track(c, src) {
		case admitClosed:
			_ = c.Close()
			return
		case admitOverSource, admitOverTotal:
			_ = c.Close()
			continue
		}
		// Until CONNECT is read; mochi then sets 1.5 keepalives.
		_ = c.SetDeadline(time.Now().Add(l.limits.ConnectTimeout))
		go func() {
			defer l.wg.Done()
			// The broker logs what matters of a client's end itself.
			err := establish(l.id, c)
			if attached := l.untrack(c, src); errors.Is(err, os.ErrDeadlineExceeded) {
				if attached {
					l.keepaliveTimeouts.Add(1)
				} else {
					l.connectTimeouts.Add(1)
				}
			}
			_ = c.Close()
		}()
	}
}

func sourceOf(c net.Conn) string {
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	return c.RemoteAddr().String()
}

type admission int

const (
	admitted admission = iota
	admitClosed
	admitOverSource
	admitOverTotal
)

// track records c and its goroutine, unless Close has begun or a cap is
// reached; under the lock, so that Close's Wait counts every goroutine it
// does not refuse.
func (l *listener) track(c net.Conn, src string) admission {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.closed:
		return admitClosed
	case len(l.conns) >= l.limits.Total:
		l.refusedTotal.Add(1)
		return admitOverTotal
	case l.bySource[src] >= l.limits.PerSource:
		l.refusedSource.Add(1)
		return admitOverSource
	}
	l.conns[c] = false
	l.bySource[src]++
	l.wg.Add(1)
	return admitted
}

// disconnectClients is what mochi's CloseFn does, with one read lock:
// GetAll copies the clients under it, and the disconnects run outside it.
// A client attached after the copy is closed with its connection below.
func (l *listener) disconnectClients() {
	if l.clients == nil {
		return
	}
	for _, cl := range l.clients.Clients.GetAll() {
		if cl.Net.Listener == l.id && !cl.Closed() {
			_ = l.clients.DisconnectClient(cl, packets.ErrServerShuttingDown)
		}
	}
}

// untrack forgets c and says whether it had completed CONNECT.
func (l *listener) untrack(c net.Conn, src string) (attached bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	attached = l.conns[c]
	delete(l.conns, c)
	if l.bySource[src]--; l.bySource[src] <= 0 {
		delete(l.bySource, src)
	}
	return attached
}

// Close stops accepting, lets the broker close its clients (last wills,
// disconnect packets), then closes what is left: connections accepted but
// not yet attached when the broker looked. It returns once every
// connection's goroutine has.
//
// It does not call mochi's CloseFn: that is Clients.GetByListener, which
// takes the clients' read lock twice (mochi-mqtt/server#488, unfixed in
// v2.7.9). A client attaching or leaving between the two (Add, Delete)
// queues a writer the second read lock waits behind, and the broker hangs
// for good: CI's mqtt package once ran into its 600 s timeout so, with
// goroutines stuck in Clients.Add.
func (l *listener) Close(listeners.CloseFn) {
	l.mu.Lock()
	first := !l.closed
	l.closed = true
	l.mu.Unlock()
	if !first {
		return
	}
	if l.ln != nil {
		_ = l.ln.Close()
	}
	l.disconnectClients()
	l.mu.Lock()
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
