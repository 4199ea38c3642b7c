package mqtt

import (
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/mochi-mqtt/server/v2/hooks/storage/bolt"
	"go.etcd.io/bbolt"
)

var boltHook = flag.Bool("chaos.bolthook", false, "measure mochi's bbolt storage hook under the flood (the design the inbox was chosen over)")

// TestFloodWithBoltStorageHook measures the other way to make the embedded
// broker survive a SIGKILL, mochi's bbolt storage hook, under the flood of
// TestChaosFloodEmbedded: it writes every in-flight message in a
// transaction of its own (an fsync each) in the publisher's read loop.
// Measured: 82 commands/s accepted where 10,000/s were asked (the inbox:
// the flood's rate, 36 commands a write). Slow, so behind a flag:
//
//	go test -run FloodWithBoltStorageHook -v ./mqtt -chaos.bolthook
func TestFloodWithBoltStorageHook(t *testing.T) {
	if !*boltHook {
		t.Skip("a measurement of 2 minutes: -chaos.bolthook")
	}
	b := startBroker(t, BrokerConfig{Listen: "127.0.0.1:0"})
	if err := b.srv.AddHook(new(bolt.Hook), &bolt.Options{Path: filepath.Join(t.TempDir(), "b.db"), Options: &bbolt.Options{Timeout: time.Second}}); err != nil {
		t.Fatal(err)
	}
	chaosFlood(t, rigOpts{broker: b.URL()})
}
