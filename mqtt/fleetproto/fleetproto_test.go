package fleetproto

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// recorder is the part of paho.Client the Resender uses: it records the
// topics published to.
type recorder struct {
	paho.Client
	mu   sync.Mutex
	sent []string
}

func (f *recorder) Publish(topic string, _ byte, _ bool, _ any) paho.Token {
	f.mu.Lock()
	f.sent = append(f.sent, topic)
	f.mu.Unlock()
	return nil // the Resender does not wait for its publications
}

// msg is a received message, for handlers under test.
type msg struct {
	topic    string
	payload  []byte
	retained bool
}

func (m msg) Duplicate() bool   { return false }
func (m msg) Qos() byte         { return 1 }
func (m msg) Retained() bool    { return m.retained }
func (m msg) Topic() string     { return m.topic }
func (m msg) MessageID() uint16 { return 0 }
func (m msg) Payload() []byte   { return m.payload }
func (m msg) Ack()              {}

// The Resender's rules: the retained resync found at the first
// subscription is old news; each later resync is acted on once; a
// command is resent only while it waits for that robot; an answered one
// never.
func TestResenderRules(t *testing.T) {
	f := &recorder{}
	rs := NewResender(f)
	resync := func(robot string, end time.Time, retained bool) {
		data, _ := json.Marshal(Resync{Robot: robot, GapEnd: end})
		rs.OnResync(f, msg{topic: "edgeagent/" + robot + "/resync", payload: data, retained: retained})
	}
	t0 := time.Date(2026, 11, 28, 5, 0, 0, 0, time.UTC)
	resync("a", t0, true) // found at subscription
	rs.Send("edgeagent/a/cmd", "1", []byte("one"), nil)
	rs.Send("edgeagent/fleet/f/cmd", "2", []byte("two"), func(robot string) bool { return robot == "b" })
	rs.Send("edgeagent/a/cmd", "3", []byte("three"), nil)
	rs.Answered("3")
	if rs.Resent() != 0 {
		t.Fatalf("resent %d on the retained resync found at subscription", rs.Resent())
	}
	resync("a", t0.Add(time.Minute), false)
	resync("a", t0.Add(time.Minute), true) // the same, again on a resubscription
	if rs.Resent() != 1 {
		t.Fatalf("resent %d for a's resync, want 1 (command 1)", rs.Resent())
	}
	resync("b", t0.Add(time.Minute), false) // b waits for 1 (any robot) and 2
	if rs.Resent() != 3 || rs.Pending() != 2 {
		t.Fatalf("resent %d, pending %d", rs.Resent(), rs.Pending())
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.sent) != 6 { // 3 sent, 3 again
		t.Fatalf("published %v", f.sent)
	}
}

// The contract's topics and payloads, byte for byte as robots and fleet
// tools have been exchanging them.
func TestTopicsAndPayloads(t *testing.T) {
	root := Root("edgeagent/r1/", "r1")
	m := Member(root, "yard", []string{"north", "pumps"})
	if root != "edgeagent/" || Root("custom/", "r1") != "custom/" ||
		m.Cmd != "edgeagent/fleet/yard/cmd" || m.Estop != "edgeagent/fleet/yard/estop" ||
		len(m.Groups) != 2 || m.Groups[1] != "edgeagent/group/pumps/cmd" || ResyncFilter(root) != "edgeagent/+/resync" {
		t.Fatalf("root %q, member %+v", root, m)
	}
	if in := m.Inputs(); len(in) != 4 || Member(root, "", []string{"x"}).Inputs() != nil {
		t.Fatalf("inputs %v", in)
	}
	info, _ := json.Marshal(RobotInfo{ID: "r1", Platform: "sim", Version: "dev", Fleet: "yard", Groups: []string{"north"}, Started: "2026-11-28T06:00:00Z"})
	if want := `{"id":"r1","platform":"sim","version":"dev","fleet":"yard","groups":["north"],"started":"2026-11-28T06:00:00Z"}`; string(info) != want {
		t.Fatalf("info %s\nwant %s", info, want)
	}
	at := time.Date(2026, 11, 28, 4, 20, 1, 200000000, time.UTC)
	rs, _ := json.Marshal(Resync{Robot: "sim-bot", GapStart: at, GapEnd: at.Add(1700 * time.Millisecond)})
	if want := `{"robot":"sim-bot","gap_start":"2026-11-28T04:20:01.2Z","gap_end":"2026-11-28T04:20:02.9Z"}`; string(rs) != want {
		t.Fatalf("resync %s\nwant %s", rs, want)
	}
}
