package mqtt

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// fakeClient is the part of paho.Client that conn uses: it records what
// is published, in order.
type fakeClient struct {
	paho.Client
	open atomic.Bool
	mu   sync.Mutex
	sent []string
}

func (f *fakeClient) IsConnectionOpen() bool { return f.open.Load() }

func (f *fakeClient) Publish(topic string, _ byte, _ bool, _ any) paho.Token {
	f.mu.Lock()
	f.sent = append(f.sent, topic)
	f.mu.Unlock()
	return doneToken{}
}

type doneToken struct{}

func (doneToken) Wait() bool                     { return true }
func (doneToken) WaitTimeout(time.Duration) bool { return true }
func (doneToken) Done() <-chan struct{}          { c := make(chan struct{}); close(c); return c }
func (doneToken) Error() error                   { return nil }

// paho reports the connection open before OnConnect has flushed the
// buffer: what is published in between must not overtake what is buffered
// (a newer retained state would be replaced by an older one).
func TestConnPublishDoesNotOvertakeTheBuffer(t *testing.T) {
	fc := &fakeClient{}
	c := &conn{client: fc, box: newOutbox(8)}
	for _, topic := range []string{"a", "b"} {
		if !c.publish(message{topic: topic}) {
			t.Fatalf("%s: sent while disconnected", topic)
		}
	}
	fc.open.Store(true) // connected; OnConnect has not flushed yet
	if c.publish(message{topic: "c"}) {
		t.Fatal("c: buffered while connected")
	}
	c.flush() // OnConnect: nothing left
	fc.open.Store(false)
	c.publish(message{topic: "d"})
	fc.open.Store(true)
	c.publish(message{topic: "e"})
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if got := fmt.Sprint(fc.sent); got != "[a b c d e]" {
		t.Fatalf("sent %s, want [a b c d e]", got)
	}
	if s := c.box.n; s != 0 {
		t.Fatalf("%d still buffered", s)
	}
}
