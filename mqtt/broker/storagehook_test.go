package broker

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"
	"github.com/mochi-mqtt/server/v2/hooks/storage/bolt"
	"go.etcd.io/bbolt"

	"github.com/edgeagent/edgeagent/internal/mqttclient"
)

var boltHook = flag.Bool("bolthook", false, "measure mochi's bbolt storage hook under a flood (the design the inbox was chosen over)")

// TestFloodWithBoltStorageHook measures the other way to make the embedded
// broker survive a SIGKILL, mochi's bbolt storage hook: it writes every
// in-flight message in a transaction of its own (an fsync each) in the
// publisher's read loop, so what it accepts per second is bounded by the
// disk, whoever subscribes. A publisher asks 10,000 commands/s for 1 s,
// as the plane's chaos flood does, and a subscriber acknowledges as they
// come. Measured: 101 commands/s accepted (5,057 of 10,000 in 50 s, then
// the publisher's 10 s write timeout ended its connection); through the
// plane, 82/s. The inbox takes the flood's rate (36 commands a write).
// Slow, so behind a flag:
//
//	go test -run FloodWithBoltStorageHook -v ./mqtt/broker -bolthook
func TestFloodWithBoltStorageHook(t *testing.T) {
	if !*boltHook {
		t.Skip("a measurement of minutes: -bolthook")
	}
	const rate, d, topic = 10000, time.Second, "edgeagent/bot/cmd"
	b := start(t, Config{Listen: "127.0.0.1:0"})
	if err := b.srv.AddHook(new(bolt.Hook), &bolt.Options{Path: filepath.Join(t.TempDir(), "b.db"), Options: &bbolt.Options{Timeout: time.Second}}); err != nil {
		t.Fatal(err)
	}
	client := func(id string) paho.Client {
		c := paho.NewClient(paho.NewClientOptions().AddBroker(b.URL()).SetClientID(id).SetCleanSession(true).
			SetAutoReconnect(false).SetOrderMatters(false).SetMaxResumePubInFlight(0).SetWriteTimeout(10 * time.Second))
		if err := mqttclient.Wait(context.Background(), c.Connect(), 5*time.Second); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Disconnect(50) })
		return c
	}
	var got atomic.Int64
	sub := client("flood-sub")
	if err := mqttclient.Wait(context.Background(), sub.Subscribe(topic, 1, func(paho.Client, paho.Message) { got.Add(1) }), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	pub := client("flood-pub")
	n := int(rate * d.Seconds())
	toks := make([]paho.Token, n)
	begin := time.Now()
	for i := range n {
		if due := begin.Add(time.Duration(i) * time.Second / rate); time.Until(due) > time.Millisecond {
			time.Sleep(time.Until(due))
		}
		toks[i] = pub.Publish(topic, 1, false, fmt.Sprintf(`{"id":"f-%d","tool":"counter.hit"}`, i))
	}
	accepted := 0
	for _, tok := range toks {
		if mqttclient.Wait(context.Background(), tok, 5*time.Minute) == nil {
			accepted++
		}
	}
	took := time.Since(begin)
	t.Logf("bolt storage hook: %d of %d commands accepted in %v: %.0f/s where %d/s were asked; %d delivered",
		accepted, n, took.Round(time.Millisecond), float64(accepted)/took.Seconds(), rate, got.Load())
}
