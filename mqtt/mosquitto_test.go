package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The same control plane against mosquitto, the broker many Pis already
// run for Home Assistant. These tests skip when mosquitto is not installed.

func TestMosquittoRoundTrip(t *testing.T) {
	m := startMosquitto(t)
	r := newRig(t, rigOpts{broker: m.URL()})
	crit := make(chan worldmodel.Event, 1)
	r.host.onCritical(func(e worldmodel.Event) { crit <- e })
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, m.URL(), "client", tp.Reply+"/#", tp.Status, tp.DiscoveryConfig)
	if got := string(p.next(t, tp.Status).Payload()); got != "online" {
		t.Fatalf("status %q", got)
	}
	checkDiscovery(t, p.next(t, tp.DiscoveryConfig).Payload(), tp)
	p.send(t, tp.Cmd, `{"id":"m1","tool":"headlight.set","params":{"on":true}}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); !rep.OK || *rep.ID != "m1" || !r.lamp.on.Load() {
		t.Fatalf("%+v", rep)
	}
	p.send(t, tp.Cmd, `{"id":"m2","tool":"headlight.set","params":{"on":"no"}}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); rep.OK || rep.Code != CodeInvalid {
		t.Fatalf("%+v", rep)
	}
	p.send(t, tp.Estop, "PRESS")
	select {
	case <-crit:
	case <-time.After(3 * time.Second):
		t.Fatal("no e-stop")
	}
	// mosquitto has no ACL of ours: the admin topic is refused...
	p.send(t, tp.Admin, `{"id":"a1","op":"skills"}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); rep.OK || rep.Code != "forbidden" {
		t.Fatalf("admin through mosquitto: %+v", rep)
	}
	// ...unless the board says its ACL can be trusted.
	r.stop(t)
	r2 := newRig(t, rigOpts{broker: m.URL(), options: func(o *Options) { o.TrustBrokerACL = true }})
	r2.start(t)
	p.send(t, tp.Admin, `{"id":"a2","op":"skills"}`)
	if rep := decodeReply(t, p.nextMatching(t, tp.Reply, func(m paho.Message) bool { return strings.Contains(string(m.Payload()), `"a2"`) })); !rep.OK {
		t.Fatalf("admin with trust_broker_acl: %+v", rep)
	}
}

func TestMosquittoLastWillOnKilledAgent(t *testing.T) {
	lastWill(t, startMosquitto(t).URL())
}

// sender is a client with a persistent session that keeps track of the
// replies it got, like a controller that must not lose commands.
type sender struct {
	c       paho.Client
	mu      sync.Mutex
	replies map[string]Reply
}

func newSender(t *testing.T, url string, tp Topics) *sender {
	s := &sender{replies: map[string]Reply{}}
	record := func(_ paho.Client, m paho.Message) {
		var r Reply
		if json.Unmarshal(m.Payload(), &r) == nil && r.ID != nil {
			s.mu.Lock()
			s.replies[*r.ID] = r
			s.mu.Unlock()
		}
	}
	o := paho.NewClientOptions().AddBroker(url).SetClientID("controller").SetCleanSession(false).
		SetStore(copyingStore{paho.NewMemoryStore()}). // as requester's (chaos_test.go)
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(200 * time.Millisecond).
		SetMaxReconnectInterval(time.Second).SetDefaultPublishHandler(record)
	s.c = paho.NewClient(o)
	if err := mqttclient.Wait(context.Background(), s.c.Connect(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.c.Disconnect(50) })
	if err := mqttclient.Wait(context.Background(), s.c.Subscribe(tp.Reply+"/#", 1, record), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *sender) send(t *testing.T, tp Topics, id string) paho.Token {
	return s.c.Publish(tp.Cmd, 1, false, fmt.Sprintf(`{"id":%q,"tool":"headlight.set","params":{"on":true}}`, id))
}

func (s *sender) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, r := range s.replies {
		if r.OK {
			n++
		}
	}
	return n
}

// TestMosquittoRestartLosesNoQoS1Commands: mosquitto restarts (its
// persistence keeps the sessions); commands sent while it was down are
// delivered afterwards, each executed once and answered.
func TestMosquittoRestartLosesNoQoS1Commands(t *testing.T) {
	m, r := mosquittoRig(t)
	tp := r.topics()
	s := newSender(t, m.URL(), tp)
	for i := range 10 {
		s.send(t, tp, fmt.Sprint("before-", i))
	}
	waittest.For(t, "10 replies", func() bool { return s.count() == 10 })

	m.Stop()
	waittest.For(t, "agent and sender disconnected", func() bool {
		return !r.plane.current().conn.client.IsConnectionOpen() && !s.c.IsConnectionOpen()
	})
	var pending []paho.Token
	for i := range 20 {
		pending = append(pending, s.send(t, tp, fmt.Sprint("during-", i)))
	}
	m.Start()
	for _, tok := range pending {
		if err := mqttclient.Wait(context.Background(), tok, 10*time.Second); err != nil {
			t.Fatalf("sender publish: %v", err)
		}
	}
	deadline := time.Now().Add(15 * time.Second)
	for s.count() < 30 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := s.count(); got != 30 {
		t.Fatalf("%d of 30 commands answered", got)
	}
	if calls := r.lamp.calls.Load(); calls != 30 {
		t.Fatalf("%d executions for 30 commands", calls)
	}
	if st := r.plane.current().conn.stats(); st.Connects != 2 {
		t.Fatalf("connects = %d", st.Connects)
	}
}

// TestMosquittoResubscribesAfterSessionLoss: a broker that comes back
// without our session (no persistence) still delivers our commands,
// because the agent subscribes again on every connect.
func TestMosquittoResubscribesAfterSessionLoss(t *testing.T) {
	m, r := mosquittoRig(t)
	tp := r.topics()
	m.Stop()
	if err := m.ForgetSessions(); err != nil {
		t.Fatal(err)
	}
	m.Start()
	waittest.For(t, "reconnected", func() bool { return r.plane.current().conn.stats().Connects == 2 })
	p := dialPeer(t, m.URL(), "client", tp.Reply+"/#")
	p.send(t, tp.Cmd, `{"id":"after","tool":"headlight.set","params":{"on":true}}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); !rep.OK {
		t.Fatalf("%+v", rep)
	}
}

// TestMosquittoOversizedCommand: mosquitto's stock limits (none) pass a
// 2 MiB command to the agent, which answers it invalid with its id.
func TestMosquittoOversizedCommand(t *testing.T) {
	m := startMosquitto(t)
	r := newRig(t, rigOpts{broker: m.URL()})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, m.URL(), "client", tp.Reply)
	p.send(t, tp.Cmd, `{"id":"huge","tool":"headlight.set","params":{"pad":"`+strings.Repeat("x", 2<<20)+`"}}`)
	msg := p.next(t, tp.Reply)
	if rep := decodeReply(t, msg); rep.OK || rep.Code != CodeInvalid || rep.ID == nil || *rep.ID != "huge" || !strings.Contains(rep.Error, "the limit is 65536") {
		t.Fatalf("%+v", rep)
	}
	if strings.Contains(string(msg.Payload()), "xxxx") {
		t.Fatal("the reply quotes the payload")
	}
}
