package broker

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/internal/lograte"
)

// The embedded broker's inbox makes a command it acknowledged survive the
// agent's SIGKILL (issue 31: 2 of 12,000 commands at 500/s were
// acknowledged to their publisher and never run nor answered). mochi
// acknowledges a QoS 1 PUBLISH before it forwards it and keeps what it
// forwards in memory, which dies with the process. Here a command (a QoS 1
// message on a topic the agent takes commands from) is taken from mochi
// before it acknowledges it, written to the store, and only then forwarded
// to the agent and acknowledged to its publisher. Writes are grouped: all
// the commands that arrive while one batch is written go in the next, one
// store transaction (one fsync) a batch, not one a message, so a flood
// costs what the command journal costs and an SD card is not written
// once per message. A command leaves the inbox once the agent has
// acknowledged it (its reply is then in the command journal, or it was
// answered at once); at the next start, what is still there is delivered
// again, and the journal answers what had run.
//
// The other design, mochi's bbolt storage hook, writes every in-flight
// message in a transaction of its own: 82 commands/s where the flood asks
// 10,000 (mqtt/README.md, "Delivery").
type inbox struct {
	kv      Store
	srv     *mochi.Server
	takes   func(topic string) bool // the topics of commands
	log     *slog.Logger
	mu      sync.Mutex
	pending []inboxItem
	dels    []string
	held    map[uint64][]uint64 // heldKey -> sequences stored
	seed    maphash.Seed
	loaded  []inboxRecord // left by the previous run, to deliver again
	next    uint64
	wake    chan struct{}
	done    chan struct{}
	stop    chan struct{}
	failed  atomic.Uint64
	limit   lograte.Limit
	clock   clock.Clock
}

const inboxBucket = "mqtt.inbox"

type inboxItem struct {
	seq uint64
	cl  *mochi.Client
	pk  packets.Packet
}

type inboxRecord struct {
	Seq     uint64 `json:"s"`
	Topic   string `json:"t"`
	Payload []byte `json:"p"`
}

func newInbox(kv Store, takes func(string) bool, clk clock.Clock, log *slog.Logger) *inbox {
	in := &inbox{kv: kv, takes: takes, clock: clk, log: log, held: map[uint64][]uint64{}, seed: maphash.MakeSeed(),
		wake: make(chan struct{}, 1), done: make(chan struct{}), stop: make(chan struct{})}
	err := kv.ForEach(inboxBucket, func(_ string, v json.RawMessage) error {
		var r inboxRecord
		if json.Unmarshal(v, &r) == nil {
			in.loaded = append(in.loaded, r)
		}
		return nil
	})
	if err != nil {
		log.Warn("broker inbox unreadable: commands acknowledged before the last stop may be lost", "err", err)
	}
	slices.SortFunc(in.loaded, func(a, b inboxRecord) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, r := range in.loaded {
		h := in.heldKey(r.Topic, r.Payload)
		in.held[h] = append(in.held[h], r.Seq)
		in.next = r.Seq + 1
	}
	return in
}

// heldKey is a command's key in held: a hash of its topic and payload,
// seeded per process (held is rebuilt from the store at every start).
func (in *inbox) heldKey(topic string, payload []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(in.seed)
	h.WriteString(topic)
	h.WriteByte(0)
	h.Write(payload)
	return h.Sum64()
}

// recordKey is a command's key in the store: its sequence, in hex of a
// fixed width so that the store's order is the arrival order.
func recordKey(seq uint64) string { return fmt.Sprintf("%016x", seq) }

// hook is the mochi hook that takes commands before mochi acknowledges them.
type inboxHook struct {
	mochi.HookBase
	in *inbox
}

func (h *inboxHook) ID() string { return "edgeagent-inbox" }

func (h *inboxHook) Provides(b byte) bool { return b == mochi.OnPublish }

func (h *inboxHook) OnPublish(cl *mochi.Client, pk packets.Packet) (packets.Packet, error) {
	if cl.Net.Inline || pk.FixedHeader.Qos == 0 || pk.FixedHeader.Retain || len(pk.Payload) == 0 || !h.in.takes(pk.TopicName) {
		return pk, nil // not a command the agent acts on: mochi's own way
	}
	h.in.mu.Lock()
	h.in.pending = append(h.in.pending, inboxItem{seq: h.in.next, cl: cl, pk: pk.Copy(true)})
	h.in.next++
	h.in.mu.Unlock()
	h.in.signal()
	return pk, packets.ErrRejectPacket // neither acknowledged nor forwarded by mochi: run does both
}

func (in *inbox) signal() {
	select {
	case in.wake <- struct{}{}:
	default:
	}
}

// run writes batches until close, then the last one.
func (in *inbox) run() {
	defer close(in.done)
	for {
		select {
		case <-in.wake:
			in.flush()
		case <-in.stop:
			in.flush()
			return
		}
	}
}

// flush writes what arrived, then forwards it to the subscribers and
// acknowledges it to its publishers, in order.
func (in *inbox) flush() {
	in.mu.Lock()
	items, dels := in.pending, in.dels
	in.pending, in.dels = nil, nil
	put := make(map[string]any, len(items))
	for _, it := range items {
		put[recordKey(it.seq)] = inboxRecord{Seq: it.seq, Topic: it.pk.TopicName, Payload: it.pk.Payload}
		h := in.heldKey(it.pk.TopicName, it.pk.Payload)
		in.held[h] = append(in.held[h], it.seq)
	}
	in.mu.Unlock()
	if len(put) == 0 && len(dels) == 0 {
		return
	}
	if err := in.kv.Update(inboxBucket, put, dels); err != nil {
		// Forwarded all the same: a broken SD card must not stop the
		// robot's commands; they are only not kept across a SIGKILL.
		if in.failed.Add(1) == 1 {
			in.log.Error("broker inbox not written: commands are forwarded but would not survive a crash", "err", err)
		}
	}
	for _, it := range items {
		in.forward(it.pk.TopicName, it.pk.Payload)
		ack := packets.Packet{FixedHeader: packets.FixedHeader{Type: packets.Puback}, PacketID: it.pk.PacketID}
		_ = it.cl.WritePacket(ack) // a publisher gone resends, and is taken again
	}
}

// forward publishes a command to its subscribers (the agent). It fails
// only while the broker closes: the command stays in the store and is
// delivered at the next start.
func (in *inbox) forward(topic string, payload []byte) {
	if err := in.srv.Publish(topic, payload, false, 1); err != nil && in.limit.Allow(in.clock.Now()) {
		in.log.Warn("broker inbox: a command kept for the next start (not forwarded now)", "topic", topic, "err", err)
	}
}

// settled removes a command the agent has acknowledged.
func (in *inbox) settled(topic string, payload []byte) {
	h := in.heldKey(topic, payload)
	in.mu.Lock()
	seqs := in.held[h]
	if len(seqs) == 0 {
		in.mu.Unlock()
		return
	}
	delete(in.held, h)
	for _, s := range seqs {
		in.dels = append(in.dels, recordKey(s))
	}
	in.mu.Unlock()
	in.signal()
}

// redeliver forwards what the previous run left, once the agent has
// subscribed; it reports how many.
func (in *inbox) redeliver() int {
	in.mu.Lock()
	left := in.loaded
	in.loaded = nil
	in.mu.Unlock()
	for _, r := range left {
		in.forward(r.Topic, r.Payload)
	}
	return len(left)
}

// close writes the last batch and stops.
func (in *inbox) close() {
	close(in.stop)
	<-in.done
}
