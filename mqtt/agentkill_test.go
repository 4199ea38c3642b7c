package mqtt

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
)

var chaosKills = flag.Int("chaos.kills", 2, "SIGKILLs of the agent with its embedded broker in TestChaosAgentKillOwnBroker")

// TestChaosAgentKillOwnBroker: the agent runs the embedded broker and is
// SIGKILLed, broker and all, during 500 commands/s, then restarted on the
// same store and port. The requester is a plain MQTT client: it does not
// resend, so every command the broker acknowledged to it must reach the
// agent by itself (the inbox). Before, 2 of 12,000 were acknowledged and
// never run nor answered. Counted from the agent's execution log:
// acknowledged and never run = lost; run twice = doubled.
func TestChaosAgentKillOwnBroker(t *testing.T) {
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	a := &childAgent{t: t, url: "embedded:" + addr, dir: dir, execLog: filepath.Join(dir, "executions")}
	a.start()
	t.Cleanup(a.kill)
	tp := NewTopics("edgeagent/test-bot/", "test-bot", "homeassistant")
	tl := newTally()
	c := requester(t, "tcp://"+addr, tl, tp)
	rate := min(*chaosRate, 500)
	kills := *chaosKills
	n := int(float64(rate) * float64(kills+1) * chaosFor.Seconds())
	ids := make([]string, n)
	toks := make([]paho.Token, n)
	start := time.Now()
	for i := range n {
		if i > 0 && i%(n/(kills+1)) == 0 {
			a.kill()
			a.start()
		}
		if due := start.Add(time.Duration(i) * time.Second / time.Duration(rate)); time.Until(due) > time.Millisecond {
			time.Sleep(time.Until(due))
		}
		ids[i] = fmt.Sprintf("ok-%d", i)
		toks[i] = c.Publish(tp.Cmd, 1, false, cmdPayload(ids[i]))
	}
	var acked []string
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i, tok := range toks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case <-tok.Done():
				if tok.Error() == nil {
					mu.Lock()
					acked = append(acked, ids[i])
					mu.Unlock()
				}
			case <-time.After(20 * time.Second):
			}
		}()
	}
	wg.Wait()
	tl.settle(len(ids))
	waitQuiet(a)
	ran := a.executions()
	// A command that never ran was either interrupted (journalled, then
	// the agent died before running it: answered failed "interrupted" at
	// the restart, which a requester reconnecting to a new broker may have
	// missed) or lost (the agent never had it). Sent again, the first is
	// answered "interrupted" and not run; the second runs now.
	var neverRan []string
	twice := 0
	for _, id := range acked {
		switch ran(id) {
		case 0:
			neverRan = append(neverRan, id)
		case 1:
		default:
			twice++
		}
	}
	interrupted, lost := 0, 0
	if len(neverRan) > 0 {
		p := dialPeer(t, "tcp://"+addr, "auditor", tp.Reply+"/#")
		for _, id := range neverRan {
			p.send(t, tp.Cmd, cmdPayload(id))
			rep := decodeReply(t, p.nextMatching(t, tp.Reply, func(m paho.Message) bool { return strings.Contains(string(m.Payload()), `"`+id+`"`) }))
			if !rep.OK && strings.Contains(rep.Error, "interrupted") {
				interrupted++
				continue
			}
			lost++
			t.Logf("acknowledged and lost: %s (sent again: %+v)", id, rep)
		}
	}
	t.Logf("agent with its broker SIGKILLed ×%d during %d commands/s: %d sent, %d acknowledged by the broker: %d run once, %d run twice, %d interrupted by a kill (answered failed, not run), %d lost",
		kills, rate, n, len(acked), len(acked)-len(neverRan)-twice, twice, interrupted, lost)
	if lost > 0 || twice > 0 {
		t.Fatalf("%d acknowledged and lost, %d run twice", lost, twice)
	}
}

// waitQuiet waits until the agent's execution log stops growing.
func waitQuiet(a *childAgent) {
	last, since := int64(-1), time.Now()
	for time.Since(since) < time.Second {
		var n int64
		if fi, err := os.Stat(a.execLog); err == nil {
			n = fi.Size()
		}
		if n != last {
			last, since = n, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}
