package mqtt

import (
	"context"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
)

// TestOversizedCommand: a command over MaxPayload that the broker passes
// is answered invalid with its id; one over the embedded broker's packet
// limit (read unread, so no id to answer) closes the publisher's
// connection and is counted with the broker's drops.
func TestOversizedCommand(t *testing.T) {
	r := newRig(t, rigOpts{})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "big-peer", tp.Reply)

	p.send(t, tp.Cmd, `{"id":"big","tool":"lamp.set","params":{"pad":"`+strings.Repeat("x", 200<<10)+`"}}`)
	rep := decodeReply(t, p.next(t, tp.Reply))
	if rep.OK || rep.Code != CodeInvalid || rep.ID == nil || *rep.ID != "big" || !strings.Contains(rep.Error, "limit is 65536") {
		t.Fatalf("a 200 KiB command: %+v", rep)
	}

	broker := r.plane.current().broker
	before := broker.Dropped()
	lost := make(chan error, 1)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(r.url()).SetClientID("huge-peer").SetAutoReconnect(false).
		SetConnectTimeout(3 * time.Second).SetConnectionLostHandler(func(_ paho.Client, err error) { lost <- err }))
	if err := mqttclient.Wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(50)
	c.Publish(tp.Cmd, 1, false, `{"id":"huge","tool":"lamp.set","params":{"pad":"`+strings.Repeat("x", 2<<20)+`"}}`)
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("the 2 MiB publisher is still connected")
	}
	waitFor(t, "the oversized packet counted", func() bool { return broker.Dropped() == before+1 })
	if !p.silent(tp.Reply, 200*time.Millisecond) {
		t.Fatal("a reply to a command the broker never read")
	}
}
