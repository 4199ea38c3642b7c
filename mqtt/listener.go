package mqtt

import (
	"log/slog"
	"net"
	"sync"

	"github.com/mochi-mqtt/server/v2/listeners"
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
type listener struct {
	id, addr string
	ln       net.Listener
	wg       sync.WaitGroup // the connections' goroutines

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

var _ listeners.Listener = (*listener)(nil)

func newListener(id, addr string) *listener {
	return &listener{id: id, addr: addr, conns: map[net.Conn]struct{}{}}
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
		c, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		if !l.track(c) {
			_ = c.Close()
			return
		}
		go func() {
			defer l.wg.Done()
			// The broker logs what matters of a client's end itself.
			_ = establish(l.id, c)
			l.untrack(c)
			_ = c.Close()
		}()
	}
}

// track records c and its goroutine, unless Close has begun; under the
// lock, so that Close's Wait counts every goroutine it does not refuse.
func (l *listener) track(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	l.conns[c] = struct{}{}
	l.wg.Add(1)
	return true
}

func (l *listener) untrack(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
}

// Close stops accepting, lets the broker close its clients (last wills,
// disconnect packets), then closes what is left: connections accepted but
// not yet attached when the broker looked. It returns once every
// connection's goroutine has.
func (l *listener) Close(closeClients listeners.CloseFn) {
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
	closeClients(l.id)
	l.mu.Lock()
	for c := range l.conns {
		_ = c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}
