package mqtt

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
	"github.com/edgeagent/edgeagent/internal/waittest"
	"github.com/edgeagent/edgeagent/mqtt/broker"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// The delivery contract of mqtt/README.md: a QoS 1 command takes effect at
// most once, and is answered.

func TestJournalVerdicts(t *testing.T) {
	kv := store.NewMemory()
	j := newJournal(kv, testWindow(100), quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); j.run(ctx) }()
	h := payloadHash([]byte("a"))
	v, _, durable := j.begin("a", h)
	if v != fresh {
		t.Fatalf("first begin: %v", v)
	}
	<-durable
	if v, _ := j.lookup("a", h); v != running {
		t.Fatalf("while running: %v", v)
	}
	if v, _ := j.lookup("a", h+1); v != reused {
		t.Fatalf("same id, other payload: %v", v)
	}
	acked := make(chan struct{})
	j.finish("a", h, []byte(`{"id":"a","ok":true}`), true, func() { close(acked) })
	<-acked // acknowledged only once the reply is in the store
	if v, reply := j.lookup("a", h); v != replay || string(reply) != `{"id":"a","ok":true}` {
		t.Fatalf("after finish: %v %s", v, reply)
	}
	v, _, durable = j.begin("b", h) // started, never finished: the agent dies
	if v != fresh {
		t.Fatal(v)
	}
	<-durable
	j.begin("c", h)
	j.forget("c", h) // refused busy: not run
	cancel()
	<-done

	// The next process.
	j2 := newJournal(kv, testWindow(100), quiet)
	if v, reply := j2.lookup("a", h); v != replay || reply == nil {
		t.Fatalf("a after restart: %v", v)
	}
	if v, _ := j2.lookup("b", h); v != interrupted {
		t.Fatalf("b after restart: %v", v)
	}
	if v, _ := j2.lookup("c", h); v != fresh {
		t.Fatalf("c after restart: %v", v)
	}
}

func TestJournalWindowBounded(t *testing.T) {
	kv := store.NewMemory()
	j := newJournal(kv, testWindow(100), quiet)
	for i := range 250 {
		id := fmt.Sprint(i)
		j.begin(id, 1)
		j.finish(id, 1, nil, true, nil)
	}
	j.flush()
	if n := j.size(); n != 100 {
		t.Fatalf("%d ids in memory", n)
	}
	stored := 0
	_ = kv.ForEach(journalBucket, func(string, json.RawMessage) error { stored++; return nil })
	if stored != 100 {
		t.Fatalf("%d ids in the store", stored)
	}
	if v, _ := j.lookup("149", 1); v != fresh {
		t.Fatal("evicted id still known")
	}
	if v, _ := j.lookup("150", 1); v != replay {
		t.Fatal("id in the window forgotten")
	}
}

// TestRedeliveryAcrossRestart: the broker (or a publisher resending after
// a broker lost its state) delivers a command again after the agent
// restarted: it is answered from the journal, not run again.
func TestRedeliveryAcrossRestart(t *testing.T) {
	b := startBroker(t, broker.Config{Listen: "127.0.0.1:0"})
	dir := t.TempDir()
	r := newRig(t, rigOpts{broker: b.URL(), dir: dir})
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, b.URL(), "client", tp.Reply+"/#")
	cmd := `{"id":"once","tool":"counter.hit","params":{"id":"once"}}`
	p.send(t, tp.Cmd, cmd)
	first := decodeReply(t, p.next(t, tp.Reply))
	r.stop(t)
	r.start(t) // the journal is read back from the store
	p.send(t, tp.Cmd, cmd)
	again := decodeReply(t, p.next(t, tp.Reply))
	if !first.OK || !again.OK || r.counter.count("once") != 1 {
		t.Fatalf("first %+v, again %+v, executions %d", first, again, r.counter.count("once"))
	}
	// The same id for another command is refused, with the id.
	p.send(t, tp.Cmd, `{"id":"once","tool":"counter.hit","params":{"id":"other"}}`)
	if rep := decodeReply(t, p.next(t, tp.Reply)); rep.OK || rep.Code != CodeInvalid || *rep.ID != "once" || r.counter.count("other") != 0 {
		t.Fatalf("reused id: %+v", rep)
	}
	st, _ := json.Marshal(r.plane.Status())
	if !strings.Contains(string(st), `"duplicates":1`) {
		t.Fatalf("status %s", st)
	}
}

// TestInterruptedCommandNotRunAgain: the agent died while a command ran
// (its id journalled, no reply); redelivered, it is answered failed
// ("interrupted") and not run a second time.
func TestInterruptedCommandNotRunAgain(t *testing.T) {
	dir := t.TempDir()
	r := newRig(t, rigOpts{dir: dir})
	cmd := r.interrupted(t)
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "client", tp.Reply+"/#")
	p.send(t, tp.Cmd, cmd)
	rep := decodeReply(t, p.next(t, tp.Reply))
	if rep.OK || rep.Code != CodeFailed || !strings.Contains(rep.Error, "interrupted") || r.counter.count("half") != 0 {
		t.Fatalf("%+v", rep)
	}
}

// TestBusyWhenQueueFull: with one worker and a queue of one, a burst is
// partly answered busy, at once, and counted; nothing goes unanswered.
func TestBusyWhenQueueFull(t *testing.T) {
	r := newRig(t, rigOpts{options: func(o *Options) { o.MaxInflight, o.Queue = 1, 1 }})
	r.lamp.delay.Store(int64(50 * time.Millisecond))
	r.start(t)
	tp := r.topics()
	p := dialPeer(t, r.url(), "client", tp.Reply+"/#")
	const n = 10
	for i := range n {
		p.send(t, tp.Cmd, fmt.Sprintf(`{"id":"b%d","tool":"headlight.set","params":{"on":true}}`, i))
	}
	ok, busy := 0, 0
	for range n {
		switch rep := decodeReply(t, p.next(t, tp.Reply)); {
		case rep.OK:
			ok++
		case rep.Code == CodeBusy:
			busy++
		default:
			t.Fatalf("%+v", rep)
		}
	}
	if busy == 0 || ok+busy != n || int64(ok) != r.lamp.calls.Load() {
		t.Fatalf("ok %d busy %d calls %d", ok, busy, r.lamp.calls.Load())
	}
	st, _ := json.Marshal(r.plane.Status())
	if !strings.Contains(string(st), fmt.Sprintf(`"busy":%d`, busy)) {
		t.Fatalf("status %s", st)
	}
}

// TestOfflineEstopClear: the owner clears a retained e-stop (an empty
// retained message) while the agent is away; the broker keeps it for the
// agent's persistent session and delivers it, not retained, at the next
// start. It must not trigger.
func TestOfflineEstopClear(t *testing.T) {
	b := startBroker(t, broker.Config{Listen: "127.0.0.1:0"})
	r := newRig(t, rigOpts{broker: b.URL()})
	r.start(t)
	tp := r.topics()
	r.stop(t)
	p := dialPeer(t, b.URL(), "owner")
	if err := mqttclient.Wait(context.Background(), p.c.Publish(tp.Estop, 1, true, ""), time.Second); err != nil {
		t.Fatal(err)
	}
	if err := mqttclient.Wait(context.Background(), p.c.Publish(tp.Cmd, 1, true, ""), time.Second); err != nil {
		t.Fatal(err)
	}
	r.start(t)
	// A live command after the queued messages: once it is answered, the
	// queued ones were handled.
	q := dialPeer(t, b.URL(), "client", tp.Reply+"/#")
	q.send(t, tp.Cmd, `{"id":"after","tool":"headlight.set","params":{"on":true}}`)
	if rep := decodeReply(t, q.next(t, tp.Reply)); !rep.OK || *rep.ID != "after" {
		t.Fatalf("%+v", rep)
	}
	if ev := r.world.Events(0, worldmodel.Critical, 0); len(ev) != 0 {
		t.Fatalf("the clear triggered an e-stop: %+v", ev)
	}
	if !q.silent(tp.Reply, 100*time.Millisecond) {
		t.Fatal("the empty command was answered")
	}
}

// Ids share a 64-bit key only by chance (about one pair in 10^15 for a
// full window); the journal then reads the stored id back, so a new id is
// never answered with another command's reply.
func TestJournalKeyCollision(t *testing.T) {
	kv := store.NewMemory()
	j := newJournal(kv, testWindow(100), quiet)
	j.key = func(string) uint64 { return 7 } // every id collides
	h := payloadHash([]byte("a"))
	j.begin("a", h)
	j.finish("a", h, []byte(`{"id":"a"}`), true, nil)
	j.flush()
	if v, reply := j.lookup("a", h); v != replay || string(reply) != `{"id":"a"}` {
		t.Fatalf("a: %v %s", v, reply)
	}
	if v, _ := j.lookup("b", h); v != fresh {
		t.Fatalf("b shares a's key, not its id: %v", v)
	}
	if v, _, _ := j.begin("b", h+1); v != fresh {
		t.Fatalf("begin b: %v", v)
	}
	j.finish("a", h, []byte(`{"id":"a","late":true}`), true, nil) // must not mark b done
	if v, _ := j.lookup("b", h+1); v != running {
		t.Fatalf("b after a's late finish: %v", v)
	}
}

// Stores written before hold records under the id itself (the first
// layout) or under a hash of it (the second); they are read, answered and
// rewritten under their sequence.
func TestJournalReadsEarlierLayouts(t *testing.T) {
	kv := store.NewMemory()
	h := payloadHash([]byte("x"))
	if err := kv.Put(journalBucket, "old-id", journalRecord{Hash: h, Seq: 41, Done: true, Reply: json.RawMessage(`{"id":"old-id"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := kv.Put(journalBucket, "9f3a", journalRecord{ID: "hashed-id", Hash: h, Seq: 40}); err != nil {
		t.Fatal(err)
	}
	j := newJournal(kv, testWindow(100), quiet)
	check := func(j *journal) {
		t.Helper()
		if v, reply := j.lookup("old-id", h); v != replay || string(reply) != `{"id":"old-id"}` {
			t.Fatalf("old-id: %v %s", v, reply)
		}
		if v, _ := j.lookup("hashed-id", h); v != interrupted {
			t.Fatalf("hashed-id: %v", v)
		}
	}
	check(j)
	j.flush()
	var keys []string
	_ = kv.ForEach(journalBucket, func(k string, _ json.RawMessage) error { keys = append(keys, k); return nil })
	if len(keys) != 2 || keys[0] != storeKey(40) || keys[1] != storeKey(41) {
		t.Fatalf("stored keys %v", keys)
	}
	j2 := newJournal(kv, testWindow(100), quiet)
	check(j2)
	if v, _, _ := j2.begin("new", h); v != fresh || j2.next != 43 {
		t.Fatalf("next sequence %d", j2.next)
	}
}

// Records are stored in the order the commands came, whatever their ids,
// so the store writes at the ends of its tree, not all over it.
func TestJournalStoresInCommandOrder(t *testing.T) {
	kv := store.NewMemory()
	j := newJournal(kv, testWindow(100), quiet)
	ids := []string{"zulu", "alpha", "mike", "bravo", "yankee"}
	for _, id := range ids {
		j.begin(id, 1)
	}
	j.flush()
	var got []string
	_ = kv.ForEach(journalBucket, func(_ string, v json.RawMessage) error {
		var r journalRecord
		_ = json.Unmarshal(v, &r)
		got = append(got, r.ID)
		return nil
	})
	if !slices.Equal(got, ids) {
		t.Fatalf("stored in key order: %v, want %v", got, ids)
	}
}

// The window's memory grows with the ids it holds and stops at its
// count: an empty window costs next to nothing (allocated whole it was
// 1.9 MB for 20,000 ids), and once the window has turned over (its table
// then holds the places of forgotten ids too, about 150 bytes an id in
// all), three times as many ids again keep nothing more. The store here
// keeps nothing, so only the journal counts. Ids in memory cost about
// 120 bytes each before, without their replies, and were never let go.
func TestJournalMemoryIsBounded(t *testing.T) {
	const window = 20000
	heap := func() int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		return int64(m.HeapAlloc)
	}
	start := heap()
	j := newJournal(discardKV{}, testWindow(window), quiet)
	if grown := heap() - start; grown > 64<<10 {
		t.Fatalf("an empty window of %d ids took %d bytes", window, grown)
	}
	fill := func(from, to int) {
		for i := from; i < to; i++ {
			id := fmt.Sprint("command-", i)
			j.begin(id, 1)
			j.finish(id, 1, nil, true, nil)
			if i%1000 == 0 {
				j.flush()
			}
		}
		j.flush()
	}
	fill(0, 2*window)
	turned := heap()
	if per := (turned - start) / window; per > 200 {
		t.Fatalf("%d bytes an id in a window that turned over", per)
	}
	fill(2*window, 5*window)
	if grown := heap() - turned; grown > 256<<10 {
		t.Fatalf("the heap grew %d bytes past a window that turned over", grown)
	}
	if j.size() != window {
		t.Fatalf("%d ids in the window", j.size())
	}
	runtime.KeepAlive(j)
}

// A stop does not wait for the journal write of a command it will not
// run: the worker waiting for its id to be durable gives up at the stop
// and the command is forgotten, as one still queued is (the broker hands
// it to the next session). Before, the worker waited out the write (1.4-4.4
// s with -race at load 20) and the node's stop reported "commands still
// running", then ran it with a cancelled context.
func TestStopSkipsACommandNotYetDurable(t *testing.T) {
	var kv *gatedKV
	r := newRig(t, rigOpts{kv: func(s KV) KV { kv = &gatedKV{KV: s}; return kv }})
	r.start(t)
	p := dialPeer(t, r.url(), "requester", r.topics().Reply+"/#")
	kv.hold()
	t.Cleanup(kv.release)
	p.send(t, r.topics().Cmd, `{"id":"late","tool":"counter.hit","params":{"id":"late"}}`)
	waittest.For(t, "the command's journal write held", func() bool { return kv.held.Load() > 0 })
	rs := r.plane.current()
	stopped := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stopped <- r.plane.OnAgentStop(ctx)
	}()
	waittest.For(t, "the workers gone, the write still held", func() bool { return rs.workers.Running() == 0 })
	kv.release()
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if n := r.counter.count("late"); n != 0 {
		t.Fatalf("the command ran %d times after the stop began", n)
	}
}

// gatedKV holds the journal's updates while its gate is closed, as a
// store stuck in an fsync does (the embedded broker's inbox, on the same
// store, goes on).
type gatedKV struct {
	KV
	mu   sync.Mutex
	gate chan struct{} // while set, Update waits until it is closed
	held atomic.Int32  // updates that met a closed gate
}

func (g *gatedKV) hold() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.gate = make(chan struct{})
}

func (g *gatedKV) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gate != nil {
		close(g.gate)
		g.gate = nil
	}
}

func (g *gatedKV) Update(bucket string, put map[string]any, del []string) error {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil && bucket == journalBucket {
		g.held.Add(1)
		<-gate
	}
	return g.KV.Update(bucket, put, del)
}

// discardKV is a store that keeps nothing.
type discardKV struct{}

func (discardKV) Update(string, map[string]any, []string) error { return nil }
func (discardKV) Get(string, string, any) (bool, error)         { return false, nil }
func (discardKV) ForEach(string, func(string, json.RawMessage) error) error {
	return nil
}
