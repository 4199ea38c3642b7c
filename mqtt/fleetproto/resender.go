package fleetproto

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// Resender is the requester's half of a resync: it keeps the commands a
// client sent and has no answer to yet, and sends them again, with the
// same ids, when a robot announces a resync (its broker lost its session
// and with it commands it had acknowledged). The robot's duplicate window
// makes that safe: a command that ran is answered with its first reply
// and not run again; a lost one runs once. The CLI (mqtt.Call) and the fleet
// client use it; mqtt/README.md shows the loop for a client of your own.
//
//	rs := fleetproto.NewResender(client)
//	client.Subscribe(fleetproto.ResyncFilter("edgeagent/"), 1, rs.OnResync)
//	rs.Send(topic, id, payload)   // instead of client.Publish
//	...on the reply with that id: rs.Answered(id)
type Resender struct {
	c paho.Client

	mu      sync.Mutex
	pending map[string]pendingCmd
	seen    map[string]string // robot -> gap_end of the last resync acted on

	resent atomic.Uint64
}

type pendingCmd struct {
	topic   string
	payload []byte
	// waiting says whether the command still waits for robot's answer
	// (a fleet command waits for several); nil: any robot.
	waiting func(robot string) bool
}

// NewResender keeps commands sent through c.
func NewResender(c paho.Client) *Resender {
	return &Resender{c: c, pending: map[string]pendingCmd{}, seen: map[string]string{}}
}

// Send publishes a command at QoS 1 and keeps it until Answered. waiting
// (optional) says whether a robot's answer is still awaited, for a
// command to several robots.
func (r *Resender) Send(topic, id string, payload []byte, waiting func(robot string) bool) paho.Token {
	r.mu.Lock()
	r.pending[id] = pendingCmd{topic: topic, payload: payload, waiting: waiting}
	r.mu.Unlock()
	return r.c.Publish(topic, 1, false, payload)
}

// Answered forgets a command: it is not sent again.
func (r *Resender) Answered(id string) {
	r.mu.Lock()
	delete(r.pending, id)
	r.mu.Unlock()
}

// Pending is the number of commands without an answer.
func (r *Resender) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}

// Resent counts the commands sent again.
func (r *Resender) Resent() uint64 { return r.resent.Load() }

// OnResync is the message handler of ResyncFilter: it sends every
// command still waiting for that robot again. A resync is retained, so it
// also arrives on every (re)subscription: each one is acted on once, and
// the one found at the first subscription (older than what we sent) not
// at all.
func (r *Resender) OnResync(_ paho.Client, m paho.Message) {
	var rs Resync
	if json.Unmarshal(m.Payload(), &rs) != nil {
		return
	}
	robot := rs.Robot
	if robot == "" {
		robot = strings.TrimSuffix(m.Topic(), "/resync")
	}
	r.mu.Lock()
	gap := rs.GapEnd.String()
	last, known := r.seen[robot]
	r.seen[robot] = gap
	// Retained and from a robot not heard of before: what its last resync
	// was when we subscribed, older than anything we sent.
	if last == gap || !known && m.Retained() {
		r.mu.Unlock()
		return
	}
	all := make([]pendingCmd, 0, len(r.pending))
	for _, p := range r.pending {
		all = append(all, p)
	}
	r.mu.Unlock()
	// waiting runs unlocked: it takes its caller's lock, which may be held
	// while Answered is called.
	for _, p := range all {
		if p.waiting == nil || p.waiting(robot) {
			r.c.Publish(p.topic, 1, false, p.payload)
			r.resent.Add(1)
		}
	}
}
