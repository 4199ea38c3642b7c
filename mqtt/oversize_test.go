package mqtt

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// TestOversizedCommand: a command over MaxPayload is answered invalid
// with its id, whether the agent read it whole (200 KiB) or the embedded
// broker refused it for its size and handed the agent its head (2 MiB);
// one whose id cannot be read is answered without one, counted and logged
// once; a big message on a topic that takes no commands is counted and
// logged by the broker. No reply quotes the payload.
func TestOversizedCommand(t *testing.T) {
	var logs syncbuf.Buffer
	r := newRig(t, rigOpts{log: slog.New(slog.NewTextHandler(&logs, nil))})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "big-peer", tp.Reply)
	broker := r.plane.current().broker
	pad := strings.Repeat("x", 2<<20)

	before, bad := broker.Dropped(), r.plane.badInput.Load()
	publishRefused(t, r.url(), tp.Cmd, `{"tool":"lamp.set","params":{"pad":"`+pad+`"}}`)
	rep := decodeReply(t, p.next(t, tp.Reply))
	if rep.OK || rep.Code != CodeInvalid || rep.ID != nil || !strings.Contains(rep.Error, "the limit is 65536") {
		t.Fatalf("a 2 MiB command without an id: %+v", rep)
	}
	if broker.Dropped() != before+1 || r.plane.badInput.Load() != bad+1 {
		t.Fatalf("dropped %d → %d, bad input %d → %d", before, broker.Dropped(), bad, r.plane.badInput.Load())
	}
	if n := strings.Count(logs.String(), "bad MQTT input"); n != 1 || strings.Contains(logs.String(), "refused a packet") {
		t.Fatalf("want one log line, got %d:\n%s", n, logs.String())
	}

	publishRefused(t, r.url(), tp.Cmd, `{"id":"huge","reply_to":"`+tp.Reply+`","tool":"lamp.set","params":{"pad":"`+pad+`"}}`)
	msg := p.next(t, tp.Reply)
	rep = decodeReply(t, msg)
	if rep.OK || rep.Code != CodeInvalid || rep.ID == nil || *rep.ID != "huge" ||
		!strings.Contains(rep.Error, "command is 2097") || !strings.Contains(rep.Error, "the limit is 65536") {
		t.Fatalf("a 2 MiB command: %+v", rep)
	}
	if strings.Contains(string(msg.Payload()), "xxxx") || strings.Contains(logs.String(), "xxxx") {
		t.Fatal("the payload is quoted")
	}

	p.send(t, tp.Cmd, `{"id":"big","tool":"lamp.set","params":{"pad":"`+strings.Repeat("x", 200<<10)+`"}}`)
	rep = decodeReply(t, p.next(t, tp.Reply))
	if rep.OK || rep.Code != CodeInvalid || rep.ID == nil || *rep.ID != "big" || !strings.Contains(rep.Error, "limit is 65536") {
		t.Fatalf("a 200 KiB command: %+v", rep)
	}

	// An e-stop that size still stops the robot.
	stopped := make(chan worldmodel.Event, 1)
	r.host.onCritical(func(e worldmodel.Event) { stopped <- e })
	publishRefused(t, r.url(), tp.Estop, "STOP "+pad)
	select {
	case e := <-stopped:
		if n, _ := e.Data["bytes"].(int); e.Kind != "estop" || n < 2<<20+5 || e.Data["payload"] != nil {
			t.Fatalf("the oversized e-stop's event: %+v", e)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a 2 MiB message on the e-stop topic did not trigger it")
	}

	before = broker.Dropped()
	publishRefused(t, r.url(), tp.Prefix+"notes/x", `{"id":"note","pad":"`+pad+`"}`)
	waittest.For(t, "the oversized note counted", func() bool { return broker.Dropped() == before+1 })
	if !p.silent(tp.Reply, 200*time.Millisecond) {
		t.Fatal("a reply to a message on a topic that takes no commands")
	}
	if n := strings.Count(logs.String(), "refused a packet over its 1 MiB limit"); n != 1 {
		t.Fatalf("want the broker's log line once, got %d", n)
	}
}

// publishRefused publishes a message over the embedded broker's packet
// limit from a client of its own, and waits for the broker to close it.
func publishRefused(t *testing.T, url, topic, payload string) {
	t.Helper()
	lost := make(chan error, 1)
	c := paho.NewClient(paho.NewClientOptions().AddBroker(url).SetClientID("huge-peer").SetAutoReconnect(false).
		SetConnectTimeout(3 * time.Second).SetConnectionLostHandler(func(_ paho.Client, err error) { lost <- err }))
	if err := mqttclient.Wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(50)
	c.Publish(topic, 1, false, payload)
	select {
	case <-lost:
	case <-time.After(5 * time.Second):
		t.Fatal("the publisher of an oversized message is still connected")
	}
}
