package mqtt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/mqtt/fleetproto"
)

// TestResyncOnSessionLoss: a broker that comes back without the agent's
// session makes the agent publish a retained resync (and record it as an
// event); one that kept it does not. The first connection announces one
// too (on the topic only): nothing of before is there.
func TestResyncOnSessionLoss(t *testing.T) {
	m, r := mosquittoRig(t)
	tp := r.topics()
	p := dialPeer(t, m.URL(), "watcher", tp.Resync)
	first := p.next(t, tp.Resync) // the first connection: nothing was there before
	var rs fleetproto.Resync
	if err := json.Unmarshal(first.Payload(), &rs); err != nil || rs.Robot != "test-bot" || !first.Retained() {
		t.Fatalf("first resync %s (retained %v): %v", first.Payload(), first.Retained(), err)
	}
	m.Stop() // saves its state: the session survives
	m.Start()
	waittest.For(t, "reconnected", func() bool { return r.plane.current().conn.stats().Connects == 2 })
	if !p.silent(tp.Resync, 300*time.Millisecond) {
		t.Fatal("resync after a restart that kept the session")
	}
	// The gap starts when the agent notices the lost connection, which on a
	// loaded machine may be after the broker is already restarting: bound it
	// by the kill, not by the restart.
	killed := time.Now()
	m.Kill()
	if err := m.ForgetSessions(); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	m.Start()
	q := dialPeer(t, m.URL(), "watcher-2", tp.Resync)
	var again fleetproto.Resync
	_ = json.Unmarshal(q.nextMatching(t, tp.Resync, func(m paho.Message) bool {
		var x fleetproto.Resync
		return json.Unmarshal(m.Payload(), &x) == nil && x.GapEnd.After(before)
	}).Payload(), &again)
	if again.GapStart.Before(killed) || !again.GapEnd.After(again.GapStart) {
		t.Fatalf("gap %v .. %v (broker killed at %v, restarted at %v)", again.GapStart, again.GapEnd, killed, before)
	}
	found := false
	for _, e := range r.world.Events(0, 0, 0) {
		found = found || e.Kind == "resync"
	}
	if !found {
		t.Fatal("no resync event in the world model")
	}
}

// resyncRequester is a controller that uses the Resender: it resends its
// unanswered commands when a robot announces a resync, and only then.
func resyncRequester(t *testing.T, url string, tl *tally, tp Topics) (paho.Client, *fleetproto.Resender) {
	t.Helper()
	var rs *fleetproto.Resender
	record := func(c paho.Client, m paho.Message) {
		tl.record(c, m)
		var r Reply
		if json.Unmarshal(m.Payload(), &r) == nil && r.ID != nil {
			rs.Answered(*r.ID)
		}
	}
	o := paho.NewClientOptions().AddBroker(url).SetClientID("resync-requester-" + randomHex(3)).SetCleanSession(false).
		SetStore(copyingStore{paho.NewMemoryStore()}). // as requester's (chaos_test.go)
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond).
		SetMaxReconnectInterval(300 * time.Millisecond).SetOrderMatters(false).SetWriteTimeout(10 * time.Second).
		SetOnConnectHandler(func(c paho.Client) {
			c.SubscribeMultiple(map[string]byte{tp.Reply + "/#": 1, fleetproto.ResyncFilter("edgeagent/"): 1}, func(c paho.Client, m paho.Message) {
				if m.Topic() == tp.Resync {
					rs.OnResync(c, m)
					return
				}
				record(c, m)
			})
		})
	c := paho.NewClient(o)
	rs = fleetproto.NewResender(c)
	if err := mqttclient.Wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(50) })
	waittest.For(t, "requester connected", c.IsConnectionOpen)
	return c, rs
}

// TestChaosMosquittoRestartWithoutState: mosquitto is SIGKILLed and comes
// back without its saved state three times during 500 commands/s. Before,
// ~1,500 commands a restart were acknowledged to the publisher and never
// delivered, and nobody said so. Now the agent announces a resync and the
// requester's Resender sends what is unanswered again: 0 lost, 0 run twice,
// with no resend of the test's own.
func TestChaosMosquittoRestartWithoutState(t *testing.T) {
	m, r := mosquittoRig(t)
	tp := r.topics()
	tl := newTally()
	_, rs := resyncRequester(t, m.URL(), tl, tp)
	rate := min(*chaosRate, 500)
	n := int(float64(rate) * 3 * chaosFor.Seconds())
	ids := make([]string, 0, n)
	start := time.Now()
	for i := range n {
		if i > 0 && i%(n/4) == 0 && i < n-n/8 {
			m.Kill()
			if err := m.ForgetSessions(); err != nil && !errors.Is(err, fs.ErrNotExist) { // not saved yet: gone all the same
				t.Fatal(err)
			}
			m.Start()
		}
		if due := start.Add(time.Duration(i) * time.Second / time.Duration(rate)); time.Until(due) > time.Millisecond {
			time.Sleep(time.Until(due))
		}
		id := fmt.Sprintf("rs-%d", i)
		ids = append(ids, id)
		rs.Send(tp.Cmd, id, []byte(cmdPayload(id)), nil)
	}
	tl.settle(len(ids))
	out := tl.outcome(ids, r.counter.count)
	t.Logf("mosquitto restarted without state ×3 during %d commands/s: %v; resent on resync %d", rate, out, rs.Resent())
	if out.lost > 0 || out.twice > 0 || out.failed > 0 {
		t.Fatalf("%v", out)
	}
}
