package mqtt

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

// The fault suite (issue 11): every run prints commands sent / executed
// once / executed twice / refused / lost and fails on any lost or doubled
// command. Short by default (CI); longer by flag, e.g.
//
//	go test -run Chaos -chaos.rate 10000 -chaos.for 3s ./mqtt
var (
	chaosRate = flag.Int("chaos.rate", 10000, "commands per second in the chaos floods")
	chaosFor  = flag.Duration("chaos.for", time.Second, "length of each chaos flood")
)

// tally counts what became of every command of a run.
type tally struct {
	mu      sync.Mutex
	replies map[string][]Reply
}

func newTally() *tally { return &tally{replies: map[string][]Reply{}} }

func (t *tally) record(_ paho.Client, m paho.Message) {
	var r Reply
	if json.Unmarshal(m.Payload(), &r) != nil || r.ID == nil {
		return
	}
	t.mu.Lock()
	t.replies[*r.ID] = append(t.replies[*r.ID], r)
	t.mu.Unlock()
}

func (t *tally) answered() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.replies)
}

// outcome sums a run up; executions are the tool's own count per id.
type outcome struct{ sent, once, twice, refused, failed, lost int }

func (o outcome) String() string {
	return fmt.Sprintf("sent %d, executed once %d, executed twice %d, refused %d, failed %d, lost %d",
		o.sent, o.once, o.twice, o.refused, o.failed, o.lost)
}

func (t *tally) outcome(ids []string, executions func(id string) int) outcome {
	t.mu.Lock()
	defer t.mu.Unlock()
	o := outcome{sent: len(ids)}
	for _, id := range ids {
		n := executions(id)
		reps := t.replies[id]
		switch {
		case n > 1:
			o.twice++
		case n == 1 && len(reps) > 0 && reps[0].OK:
			o.once++
		case n == 0 && len(reps) > 0 && reps[0].Code == CodeBusy:
			o.refused++
		case n == 0 && len(reps) > 0:
			o.failed++
		default: // executed without a reply, or neither
			o.lost++
		}
	}
	return o
}

// flood publishes rate commands/s for d at QoS 1 and returns their ids.
func flood(t *testing.T, c paho.Client, tp Topics, prefix string, rate int, d time.Duration) []string {
	t.Helper()
	n := int(float64(rate) * d.Seconds())
	ids := make([]string, 0, n)
	toks := make([]paho.Token, 0, n)
	start := time.Now()
	for i := range n {
		// Paced in bursts of 1 ms worth of commands.
		if due := start.Add(time.Duration(i) * time.Second / time.Duration(rate)); time.Until(due) > time.Millisecond {
			time.Sleep(time.Until(due))
		}
		id := fmt.Sprintf("%s-%d", prefix, i)
		ids = append(ids, id)
		toks = append(toks, c.Publish(tp.Cmd, 1, false, fmt.Sprintf(`{"id":%q,"tool":"counter.hit","params":{"id":%q}}`, id, id)))
	}
	for _, tok := range toks {
		if err := wait(context.Background(), tok, 30*time.Second); err != nil {
			t.Fatalf("publish not acknowledged by the broker: %v", err)
		}
	}
	t.Logf("published %d commands in %v (%.0f/s asked %d/s)", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds(), rate)
	return ids
}

func floodClient(t *testing.T, url string, tl *tally, tp Topics) paho.Client {
	t.Helper()
	o := paho.NewClientOptions().AddBroker(url).SetClientID("flood-" + randomHex(4)).SetCleanSession(true).
		SetAutoReconnect(false).SetOrderMatters(false).SetConnectTimeout(3 * time.Second).
		SetMaxResumePubInFlight(0).SetWriteTimeout(10 * time.Second)
	c := paho.NewClient(o)
	if err := wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(50) })
	if err := wait(context.Background(), c.Subscribe(tp.Reply+"/#", 1, tl.record), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	return c
}

// settle waits until every command is answered or nothing changes for a while.
func (t *tally) settle(n int) {
	last, since := -1, time.Now()
	for time.Since(since) < 3*time.Second {
		a := t.answered()
		if a >= n {
			return
		}
		if a != last {
			last, since = a, time.Now()
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func chaosFlood(t *testing.T, o rigOpts) {
	r := newRig(t, o)
	r.start(t)
	tp := r.topics()
	tl := newTally()
	c := floodClient(t, r.url(), tl, tp)
	ids := flood(t, c, tp, "f", *chaosRate, *chaosFor)
	tl.settle(len(ids))
	out := tl.outcome(ids, r.counter.count)
	t.Logf("flood %d/s for %v: %v", *chaosRate, *chaosFor, out)
	if out.lost > 0 || out.twice > 0 || out.failed > 0 {
		b, _ := json.Marshal(r.plane.Status())
		t.Fatalf("%v\nstatus %s", out, b)
	}
}

func TestChaosFloodEmbedded(t *testing.T) { chaosFlood(t, rigOpts{}) }

func TestChaosFloodMosquitto(t *testing.T) {
	m := startMosquitto(t)
	chaosFlood(t, rigOpts{broker: m.url()})
}
