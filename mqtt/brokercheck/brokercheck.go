// Package brokercheck is `edgeagent doctor --broker URL`: it checks an
// MQTT broker the way the agent uses it and says which settings a robot's
// broker needs.
package brokercheck

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/mqttclient"
)

// A broker with
// mosquitto's stock limits (20 messages in flight, 1,000 queued per
// client) acknowledged 14,311 of 30,000 commands of a 10k/s flood to their
// publisher and never delivered them, and said nothing (issue 31). The
// check does what the agent does to a broker, on a topic of its own: a
// subscriber that holds its acknowledgements, as
// the agent holds a command's until it has run, while a publisher sends a
// burst of QoS 1 messages; then it acknowledges and counts what arrives.
// What the broker let through before any acknowledgement is its in-flight
// window, what followed its queue, the rest it dropped. A few single round
// trips are timed too (Nagle's algorithm shows as ~40 ms, though not on
// every pattern: set_tcp_nodelay is printed whatever they show).

// Options say which broker to check and how hard.
type Options struct {
	URL                string
	Username, Password string
	TLS                *tls.Config // ssl:// brokers
	Burst              int         // QoS 1 messages in the burst (default 3,000)
	RoundTrips         int         // single round trips timed (default 20)
	Clock              clock.Clock // times the round trips and the quiet (default: the wall clock)
}

// Report is what the check saw.
type Report struct {
	Sent     int `json:"sent"`     // acknowledged to the publisher by the broker
	Received int `json:"received"` // delivered to the subscriber, once each
	Dropped  int `json:"dropped"`  // acknowledged and never delivered
	// InFlight is how many the broker delivered before the subscriber
	// acknowledged any: its in-flight window for a client.
	InFlight   int           `json:"in_flight"`
	Duplicates int           `json:"duplicates"` // delivered twice
	RoundTrip  time.Duration `json:"round_trip_p50_ns"`
}

// Settings are the mosquitto.conf lines a robot's broker needs, with why
// (mqtt/README.md and docs/fleet.md say the same).
var Settings = []struct{ Line, Why string }{
	{"max_queued_messages 100000", "the stock 1000 drops what a robot's queue holds beyond it during a burst"},
	{"max_inflight_messages 100", "the stock 20 makes every command wait for the acknowledgement of earlier ones"},
	{"set_tcp_nodelay true", "without it every reply can wait ~40 ms (Nagle's algorithm)"},
	{"persistence true", "without it a restart forgets the robots' sessions and the commands queued for them"},
	{"autosave_interval 10", "a broker killed before its first save has forgotten everything since the last one"},
}

// Run runs the check. It uses a topic of its own
// (edgeagent-doctor/<nonce>), so it can run beside a live fleet.
func Run(ctx context.Context, o Options) (Report, error) {
	if o.Burst <= 0 {
		o.Burst = 3000
	}
	if o.RoundTrips <= 0 {
		o.RoundTrips = 20
	}
	o.Clock = clock.Or(o.Clock)
	nonce := rand.Text()[:8]
	topic := "edgeagent-doctor/" + nonce
	sub := newProbeSubscriber()
	subc, err := probeClient(ctx, o, "edgeagent-doctor-sub-"+nonce, true)
	if err != nil {
		return Report{}, err
	}
	defer subc.Disconnect(50)
	if err := mqttclient.Wait(ctx, subc.Subscribe(topic+"/#", 1, sub.receive), 5*time.Second); err != nil {
		return Report{}, fmt.Errorf("subscribing: %w", err)
	}
	pub, err := probeClient(ctx, o, "edgeagent-doctor-pub-"+nonce, false)
	if err != nil {
		return Report{}, err
	}
	defer pub.Disconnect(50)
	rep, err := burst(ctx, o.Clock, pub, sub, topic+"/burst", o.Burst)
	if err != nil {
		return rep, err
	}
	rep.RoundTrip, err = roundTrips(ctx, o.Clock, pub, sub, topic+"/rt", o.RoundTrips)
	return rep, err
}

// probeClient connects one of the check's two clients; the subscriber
// (holdAcks) acknowledges by hand. Both are clean sessions: the check
// leaves nothing on the broker (mosquitto's queue limits apply to a
// connected client's queue all the same).
func probeClient(ctx context.Context, o Options, id string, holdAcks bool) (paho.Client, error) {
	po := paho.NewClientOptions().AddBroker(o.URL).SetClientID(id).SetCleanSession(true).
		SetAutoReconnect(false).SetOrderMatters(false).SetAutoAckDisabled(holdAcks).
		SetConnectTimeout(5 * time.Second).SetWriteTimeout(5 * time.Second).SetMaxResumePubInFlight(0)
	if o.Username != "" {
		po.SetUsername(o.Username).SetPassword(o.Password)
	}
	if o.TLS != nil {
		po.SetTLSConfig(o.TLS)
	}
	c := paho.NewClient(po)
	if err := mqttclient.Wait(ctx, c.Connect(), 10*time.Second); err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", o.URL, err)
	}
	return c, nil
}

// probeSubscriber counts what arrives and, while holding, keeps the
// acknowledgements back.
type probeSubscriber struct {
	mu      sync.Mutex
	holding bool
	held    []paho.Message
	seen    map[string]int
	arrived chan string // round-trip payloads
}

func newProbeSubscriber() *probeSubscriber {
	return &probeSubscriber{seen: map[string]int{}, arrived: make(chan string, 64)}
}

func (s *probeSubscriber) receive(_ paho.Client, m paho.Message) {
	s.mu.Lock()
	if strings.HasSuffix(m.Topic(), "/rt") {
		s.mu.Unlock()
		m.Ack()
		select {
		case s.arrived <- string(m.Payload()):
		default:
		}
		return
	}
	s.seen[string(m.Payload())]++
	if s.holding {
		s.held = append(s.held, m)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	m.Ack()
}

// counts are the distinct messages received and those received twice.
func (s *probeSubscriber) counts() (distinct, twice int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.seen {
		distinct++
		if n > 1 {
			twice++
		}
	}
	return distinct, twice
}

// burst publishes n messages while the subscriber holds its
// acknowledgements, then releases them and counts what arrives.
func burst(ctx context.Context, c clock.Clock, pub paho.Client, sub *probeSubscriber, topic string, n int) (Report, error) {
	sub.mu.Lock()
	sub.holding = true
	sub.mu.Unlock()
	toks := make([]paho.Token, n)
	for i := range n {
		toks[i] = pub.Publish(topic, 1, false, fmt.Sprint(i))
	}
	var rep Report
	for _, tok := range toks {
		if err := mqttclient.Wait(ctx, tok, 10*time.Second); err != nil {
			return rep, fmt.Errorf("the broker did not acknowledge the burst: %w", err)
		}
		rep.Sent++
	}
	settle(ctx, c, sub, 300*time.Millisecond)
	rep.InFlight, _ = sub.counts()
	sub.mu.Lock()
	held := sub.held
	sub.held, sub.holding = nil, false
	sub.mu.Unlock()
	for _, m := range held {
		m.Ack()
	}
	settle(ctx, c, sub, time.Second)
	rep.Received, rep.Duplicates = sub.counts()
	rep.Dropped = rep.Sent - rep.Received
	return rep, ctx.Err()
}

// settle waits until nothing new arrived for quiet.
func settle(ctx context.Context, c clock.Clock, sub *probeSubscriber, quiet time.Duration) {
	last, since := -1, c.Now()
	for c.Since(since) < quiet && ctx.Err() == nil {
		if n, _ := sub.counts(); n != last {
			last, since = n, c.Now()
		}
		_ = clock.Sleep(ctx, c, 10*time.Millisecond)
	}
}

// roundTrips times n single messages from publisher to subscriber and
// returns the median.
func roundTrips(ctx context.Context, c clock.Clock, pub paho.Client, sub *probeSubscriber, topic string, n int) (time.Duration, error) {
	took := make([]time.Duration, 0, n)
	for i := range n {
		want := fmt.Sprint("rt-", i)
		start := c.Now()
		pub.Publish(topic, 1, false, want)
		timeout := c.NewTimer(5 * time.Second)
	wait:
		for {
			select {
			case got := <-sub.arrived:
				if got == want {
					break wait
				}
			case <-timeout.C():
				return 0, fmt.Errorf("a single message took more than 5 s through the broker")
			case <-ctx.Done():
				return 0, ctx.Err()
			}
		}
		timeout.Stop()
		took = append(took, c.Since(start))
	}
	slices.Sort(took)
	return took[len(took)/2], nil
}
