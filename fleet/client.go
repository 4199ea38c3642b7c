// Package fleet is the operator's side of a fleet: it talks only MQTT, so it
// runs from a laptop against whatever broker (or cluster) the robots use.
// It lists robots from their retained announcements, calls a tool on a group
// and collects every member's answer, and stops a whole fleet, counting the
// acknowledgements. `edgeagent fleet` is its command line.
package fleet

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/mqtt/fleetproto"
)

// Options say how to reach the fleet's broker.
type Options struct {
	Broker   string // tcp://host:1883 or ssl://host:8883
	Username string
	Password string
	TLS      *tls.Config // for ssl:// brokers
	// Root is the topic root the robots share: their prefix without the
	// device level (default "edgeagent/").
	Root string
}

// Client is one connection to the fleet's broker.
type Client struct {
	c    paho.Client
	root string
}

// Dial connects to the broker.
func Dial(ctx context.Context, o Options) (*Client, error) {
	if o.Root == "" {
		o.Root = "edgeagent/"
	}
	if !strings.HasSuffix(o.Root, "/") {
		o.Root += "/"
	}
	po := paho.NewClientOptions().AddBroker(o.Broker).SetClientID("edgeagent-fleet-" + nonce()).
		SetCleanSession(true).SetAutoReconnect(false).SetOrderMatters(false).
		SetConnectTimeout(5 * time.Second).SetWriteTimeout(5 * time.Second)
	if o.Username != "" {
		po.SetUsername(o.Username).SetPassword(o.Password)
	}
	if o.TLS != nil {
		po.SetTLSConfig(o.TLS)
	}
	c := paho.NewClient(po)
	if err := await(ctx, c.Connect()); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", o.Broker, err)
	}
	return &Client{c: c, root: o.Root}, nil
}

// Close disconnects.
func (c *Client) Close() { c.c.Disconnect(100) }

func await(ctx context.Context, tok paho.Token) error {
	select {
	case <-tok.Done():
		return tok.Error()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func nonce() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // crypto/rand never fails on Linux
	return hex.EncodeToString(b)
}

// Robot is one robot as its retained announcements describe it.
type Robot struct {
	ID       string    `json:"id"`
	Platform string    `json:"platform,omitempty"`
	Model    string    `json:"model,omitempty"`
	Version  string    `json:"version,omitempty"`
	Fleet    string    `json:"fleet,omitempty"`
	Groups   []string  `json:"groups,omitempty"`
	Status   string    `json:"status"`          // online | offline | stopped
	EStop    string    `json:"estop,omitempty"` // latched | ok
	Started  string    `json:"started,omitempty"`
	LastSeen time.Time `json:"last_seen"` // when this listing last heard from it (retained messages count as now)
}

// List collects the robots' retained status, info and e-stop state for
// window (retained messages arrive at once; live ones during the window).
func (c *Client) List(ctx context.Context, window time.Duration) ([]Robot, error) {
	var mu sync.Mutex
	robots := map[string]*Robot{}
	get := func(id string) *Robot {
		r := robots[id]
		if r == nil {
			r = &Robot{ID: id, Status: "unknown"}
			robots[id] = r
		}
		return r
	}
	handler := func(_ paho.Client, m paho.Message) {
		id, leaf, ok := c.split(m.Topic())
		if !ok || len(m.Payload()) == 0 {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		r := get(id)
		r.LastSeen = time.Now()
		switch leaf {
		case "status":
			r.Status = string(m.Payload())
		case "state/estop":
			r.EStop = string(m.Payload())
		case "info":
			var in fleetproto.RobotInfo
			if json.Unmarshal(m.Payload(), &in) == nil {
				r.Platform, r.Model, r.Version, r.Fleet, r.Groups, r.Started = in.Platform, in.Model, in.Version, in.Fleet, in.Groups, in.Started
			}
		}
	}
	filters := map[string]byte{c.root + "+/status": 1, c.root + "+/info": 1, c.root + "+/state/estop": 1}
	if err := await(ctx, c.c.SubscribeMultiple(filters, handler)); err != nil {
		return nil, fmt.Errorf("subscribing: %w", err)
	}
	defer c.c.Unsubscribe(c.root+"+/status", c.root+"+/info", c.root+"+/state/estop")
	t := time.NewTimer(window)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	mu.Lock()
	defer mu.Unlock()
	out := make([]Robot, 0, len(robots))
	for _, r := range robots {
		if r.ID == "fleet" || r.ID == "group" {
			continue // the fleet's own topic levels, not robots
		}
		out = append(out, *r)
	}
	sortRobots(out)
	return out, nil
}

// split takes <root><id>/<leaf> apart.
func (c *Client) split(topic string) (id, leaf string, ok bool) {
	rest, ok := strings.CutPrefix(topic, c.root)
	if !ok {
		return "", "", false
	}
	id, leaf, ok = strings.Cut(rest, "/")
	return id, leaf, ok
}

// Answer is one robot's reply to a fleet or group command.
type Answer struct {
	Robot string        `json:"robot"`
	Reply mqtt.Reply    `json:"reply"`
	After time.Duration `json:"after_ns"` // from publishing the command to this reply
}

// Target is where a command goes: a group, or the whole fleet.
type Target struct {
	Group string
	Fleet string
}

func (t Target) topic(root, leaf string) (string, error) {
	switch {
	case t.Group != "" && t.Fleet == "" && leaf == "cmd":
		return fleetproto.GroupCmd(root, t.Group), nil
	case t.Fleet != "" && t.Group == "":
		return fleetproto.FleetTopic(root, t.Fleet, leaf), nil
	}
	return "", errors.New("a target is one group or one fleet")
}

// Call sends one tool call to a target and collects the answers until
// expect robots answered or ctx ends (expect <= 0: nobody is expected to
// answer now, so it returns once the command is published). Each member answers
// once, on its own reply topic; a robot answering twice (it should not) is
// counted once and reported in Duplicates.
func (c *Client) Call(ctx context.Context, to Target, tool string, params json.RawMessage, expect int) (answers []Answer, duplicates int, err error) {
	topic, err := to.topic(c.root, "cmd")
	if err != nil {
		return nil, 0, err
	}
	id := "fleet-" + nonce()
	payload, err := json.Marshal(mqtt.Command{ID: id, Tool: tool, Params: params})
	if err != nil {
		return nil, 0, err
	}
	return c.collect(ctx, id, topic, payload, expect)
}

// EStop stops every robot of a fleet and collects their acknowledgements
// (each sent once its actuators are stopped and its latch set).
func (c *Client) EStop(ctx context.Context, fleetName string, expect int) ([]Answer, error) {
	topic, err := Target{Fleet: fleetName}.topic(c.root, "estop")
	if err != nil {
		return nil, err
	}
	id := "estop-" + nonce()
	payload, _ := json.Marshal(map[string]string{"id": id}) // strings: always encodes
	answers, _, err := c.collect(ctx, id, topic, payload, expect)
	return answers, err
}

func (c *Client) collect(ctx context.Context, id, topic string, payload []byte, expect int) ([]Answer, int, error) {
	var (
		mu      sync.Mutex
		answers []Answer
		seen    = map[string]bool{}
		dups    int
		start   time.Time
		done    = make(chan struct{})
		closed  bool
	)
	replies := c.root + "+/reply"
	handler := func(_ paho.Client, m paho.Message) {
		var r mqtt.Reply
		if json.Unmarshal(m.Payload(), &r) != nil || r.ID == nil || *r.ID != id {
			return
		}
		robot := r.Robot
		if robot == "" {
			robot, _, _ = c.split(m.Topic())
		}
		mu.Lock()
		defer mu.Unlock()
		if seen[robot] {
			dups++
			return
		}
		seen[robot] = true
		answers = append(answers, Answer{Robot: robot, Reply: r, After: time.Since(start)})
		if expect > 0 && len(answers) >= expect && !closed {
			closed = true
			close(done)
		}
	}
	if err := await(ctx, c.c.Subscribe(replies, 1, handler)); err != nil {
		return nil, 0, fmt.Errorf("subscribing to %s: %w", replies, err)
	}
	defer c.c.Unsubscribe(replies)
	// A robot whose broker lost its session while we wait announces a
	// resync: the command is sent again, with its id, if that robot has
	// not answered (its duplicate window keeps it from running twice).
	resend := fleetproto.NewResender(c.c)
	resyncs := fleetproto.ResyncFilter(c.root)
	if err := await(ctx, c.c.Subscribe(resyncs, 1, resend.OnResync)); err != nil {
		return nil, 0, fmt.Errorf("subscribing to %s: %w", resyncs, err)
	}
	defer c.c.Unsubscribe(resyncs)
	mu.Lock()
	start = time.Now()
	mu.Unlock()
	waiting := func(robot string) bool { mu.Lock(); defer mu.Unlock(); return !seen[robot] }
	if err := await(ctx, resend.Send(topic, id, payload, waiting)); err != nil {
		return nil, 0, fmt.Errorf("publishing to %s: %w", topic, err)
	}
	timedOut := false
	if expect > 0 {
		select {
		case <-done:
		case <-ctx.Done():
			timedOut = true
		}
	}
	mu.Lock() // answers may still arrive: read them under the lock
	defer mu.Unlock()
	out := append([]Answer(nil), answers...)
	if timedOut {
		return out, dups, fmt.Errorf("%w: answers from %d of %d robots", ctx.Err(), len(out), expect)
	}
	return out, dups, nil
}

// Status calls agent.status on one robot.
func (c *Client) Status(ctx context.Context, robot string) (mqtt.Reply, error) {
	id := "fleet-" + nonce()
	payload, _ := json.Marshal(mqtt.Command{ID: id, Tool: "agent.status"}) // plain strings: always encodes
	answers, _, err := c.collect(ctx, id, c.root+robot+"/cmd", payload, 1)
	if err != nil {
		return mqtt.Reply{}, fmt.Errorf("no answer from %s: %w", robot, err)
	}
	return answers[0].Reply, nil
}
