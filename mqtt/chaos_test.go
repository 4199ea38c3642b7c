package mqtt

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/mqtt/broker"
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
		n, reps := executions(id), t.replies[id]
		ok, busy := false, true
		for _, r := range reps {
			ok = ok || r.OK
			busy = busy && r.Code == CodeBusy
		}
		switch {
		case n > 1:
			o.twice++
		case len(reps) == 0 || ok && n == 0:
			o.lost++ // never answered, or answered ok without running
		case ok:
			o.once++
		case busy:
			o.refused++
		default: // answered with an error, e.g. interrupted by an agent death
			o.failed++
		}
	}
	return o
}

// unanswered are the ids without a reply yet.
func (t *tally) unanswered(ids []string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, id := range ids {
		if len(t.replies[id]) == 0 {
			out = append(out, id)
		}
	}
	return out
}

func cmdPayload(id string) string {
	return fmt.Sprintf(`{"id":%q,"tool":"counter.hit","params":{"id":%q}}`, id, id)
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
		toks = append(toks, c.Publish(tp.Cmd, 1, false, cmdPayload(id)))
	}
	for _, tok := range toks {
		// Not fatal: a broker killed mid-stream may fail a publish; the
		// requester then resends unanswered commands with the same id.
		if err := mqttclient.Wait(context.Background(), tok, 30*time.Second); err != nil {
			t.Logf("publish not acknowledged by the broker: %v", err)
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
	if err := mqttclient.Wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(50) })
	if err := mqttclient.Wait(context.Background(), c.Subscribe(tp.Reply+"/#", 1, tl.record), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	return c
}

// settle waits until every command is answered or nothing changes for a
// while: 3 s once replies come, 10 s for the first one, since on the
// shared 2-core machine at load ~30 a flood's first replies came more than
// 3 s after it ended and a run that lost nothing counted them lost
// (TestResendAfterFloodRunsNothingTwice). A run where all are answered
// returns at once.
func (t *tally) settle(n int) { t.settleQuiet(n, 3*time.Second) }

// settleQuiet is settle with quiet, not 3 s, once replies come.
func (t *tally) settleQuiet(n int, quietAfterFirst time.Duration) {
	first := t.answered()
	last, since := first, time.Now()
	for {
		a := t.answered()
		if a >= n {
			return
		}
		if a != last {
			last, since = a, time.Now()
		}
		quiet := quietAfterFirst
		if a == first {
			quiet = max(quiet, 10*time.Second)
		}
		if time.Since(since) >= quiet {
			return
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
	// Nothing is injected here, so every command must be answered, and a
	// pause is the machine's, not a fault's: the workers wait for each
	// journal batch to be durable, and one write took 1.4-4.4 s with -race
	// at load 20, past settle's 3 s. (18 of 10,000 were counted lost once
	// at load ~20; starved by hand here, 0 were.) A command really lost
	// still fails, 15 s after the last reply, and the status printed then
	// tells a broker's drop (broker_dropped) from the plane's.
	tl.settleQuiet(len(ids), 15*time.Second)
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
	chaosFlood(t, rigOpts{broker: m.URL()})
}

// requester is a controller that must not lose commands: a persistent
// session, reconnecting, subscribing to its replies on every connect.
func requester(t *testing.T, url string, tl *tally, tp Topics) paho.Client {
	t.Helper()
	// copyingStore as the plane's: paho 1.5.1's resume() sets DUP on the
	// stored packet its writer may be packing (a race -race reported here).
	o := paho.NewClientOptions().AddBroker(url).SetClientID("requester-" + randomHex(3)).SetCleanSession(false).
		SetStore(copyingStore{paho.NewMemoryStore()}).
		SetAutoReconnect(true).SetConnectRetry(true).SetConnectRetryInterval(100 * time.Millisecond).
		SetMaxReconnectInterval(300 * time.Millisecond).SetOrderMatters(false).SetWriteTimeout(10 * time.Second).
		SetOnConnectHandler(func(c paho.Client) { c.Subscribe(tp.Reply+"/#", 1, tl.record) })
	c := paho.NewClient(o)
	if err := mqttclient.Wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Disconnect(50) })
	waittest.For(t, "requester subscribed", func() bool { return c.IsConnectionOpen() })
	return c
}

// finish settles a run: what is still unanswered is sent again with the
// same id (what a controller does after a timeout), then the outcome is
// counted, printed, and the test fails on any lost or doubled command.
func finish(t *testing.T, name string, c paho.Client, tl *tally, tp Topics, ids []string, executions func(string) int, allowFailed bool) {
	t.Helper()
	tl.settle(len(ids))
	for round := 0; round < 3; round++ {
		missing := tl.unanswered(ids)
		if len(missing) == 0 {
			break
		}
		t.Logf("%s: %d unanswered, sent again with the same id", name, len(missing))
		for _, id := range missing {
			c.Publish(tp.Cmd, 1, false, cmdPayload(id))
		}
		tl.settle(len(ids))
	}
	out := tl.outcome(ids, executions)
	t.Logf("%s: %v", name, out)
	if out.lost > 0 || out.twice > 0 || (!allowFailed && out.failed > 0) {
		t.Fatalf("%s: %v", name, out)
	}
}

// streamWith sends rate commands/s for d and runs fault at 1/3 and 2/3 of
// the stream.
func streamWith(t *testing.T, c paho.Client, tp Topics, prefix string, rate int, d time.Duration, fault func(i int)) []string {
	t.Helper()
	n := int(float64(rate) * d.Seconds())
	ids := make([]string, 0, n)
	start := time.Now()
	for i := range n {
		if i > 0 && (i == n/3 || i == 2*n/3) {
			fault(i)
		}
		if due := start.Add(time.Duration(i) * time.Second / time.Duration(rate)); time.Until(due) > time.Millisecond {
			time.Sleep(time.Until(due))
		}
		id := fmt.Sprintf("%s-%d", prefix, i)
		ids = append(ids, id)
		c.Publish(tp.Cmd, 1, false, cmdPayload(id))
	}
	return ids
}

// TestChaosBrokerKill: mosquitto is SIGKILLed twice during a stream and
// comes back after a pause; nothing is lost or run twice (redeliveries and
// the requester's resends are answered from the journal).
func TestChaosBrokerKill(t *testing.T) {
	m, r := mosquittoRig(t)
	tp := r.topics()
	tl := newTally()
	c := requester(t, m.URL(), tl, tp)
	rate := min(*chaosRate, 1000)
	ids := streamWith(t, c, tp, "bk", rate, 2**chaosFor, func(int) {
		m.Kill()
		time.Sleep(300 * time.Millisecond)
		m.Start()
	})
	finish(t, fmt.Sprintf("broker SIGKILL ×2 during %d commands/s", rate), c, tl, tp, ids, r.counter.count, false)
}

// childAgent is the agent in a process of its own, to be SIGKILLed.
type childAgent struct {
	t         *testing.T
	url, dir  string
	execLog   string
	cmd       *exec.Cmd
	incarnate int
}

func (a *childAgent) start() {
	a.t.Helper()
	a.cmd = exec.Command(os.Args[0], "-test.run=^$")
	a.cmd.Env = append(os.Environ(), "EDGEAGENT_MQTT_CHILD="+a.url, "EDGEAGENT_MQTT_CHILD_DIR="+a.dir,
		"EDGEAGENT_MQTT_CHILD_EXEC="+a.execLog)
	out, _ := a.cmd.StdoutPipe()
	a.cmd.Stderr = os.Stderr
	if err := a.cmd.Start(); err != nil {
		a.t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		buf := make([]byte, 6)
		if n, _ := out.Read(buf); strings.HasPrefix(string(buf[:n]), "ready") {
			close(ready)
		}
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case <-ready:
	case <-time.After(20 * time.Second):
		a.t.Fatal("child agent did not connect")
	}
	a.incarnate++
}

func (a *childAgent) kill() {
	if a.cmd != nil {
		_ = a.cmd.Process.Signal(syscall.SIGKILL)
		_ = a.cmd.Wait()
		a.cmd = nil
	}
}

// executions reads the children's execution log.
func (a *childAgent) executions() func(string) int {
	data, err := os.ReadFile(a.execLog)
	if err != nil && !os.IsNotExist(err) {
		a.t.Fatal(err)
	}
	n := map[string]int{}
	for _, id := range strings.Fields(string(data)) {
		n[id]++
	}
	return func(id string) int { return n[id] }
}

func chaosAgentKill(t *testing.T, url string) {
	dir := t.TempDir()
	a := &childAgent{t: t, url: url, dir: dir, execLog: filepath.Join(dir, "executions")}
	a.start()
	t.Cleanup(a.kill)
	tp := NewTopics("edgeagent/test-bot/", "test-bot", "homeassistant")
	tl := newTally()
	c := requester(t, url, tl, tp)
	rate := min(*chaosRate, 1000)
	ids := streamWith(t, c, tp, "ak", rate, 2**chaosFor, func(int) {
		a.kill()
		a.start() // the same store: the journal of the previous incarnation
	})
	finish(t, fmt.Sprintf("agent SIGKILL ×2 during %d commands/s", rate), c, tl, tp, ids, func(id string) int { return a.executions()(id) }, true)
}

func TestChaosAgentKillEmbeddedBroker(t *testing.T) {
	b := startBroker(t, broker.Config{Listen: "127.0.0.1:0"})
	chaosAgentKill(t, b.URL())
}

func TestChaosAgentKillMosquitto(t *testing.T) {
	chaosAgentKill(t, startMosquitto(t).URL())
}
