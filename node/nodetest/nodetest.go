// Package nodetest builds a whole node on the sim board for the tests of
// the packages it assembles (plugins, tools): the real board loader, the
// real runtime, no store, logs discarded.
package nodetest

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/node"
)

// Board parses the board file of a sim robot that is the device line, a
// temporary data_dir and then src (the rest of the board, YAML), as
// t.yaml.
func Board(t testing.TB, src string) *board.Config {
	t.Helper()
	cfg, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func parse(t testing.TB, src string) (*board.Config, error) {
	return board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\ndata_dir: "+t.TempDir()+"\n"+src))
}

// options are the node's: logs discarded, no store.
func options() node.Options { return node.Options{Log: slog.New(slog.DiscardHandler), NoStore: true} }

// New builds the node of the Board of src. The node is closed when the
// test ends.
func New(t testing.TB, src string) *node.Node {
	t.Helper()
	n, err := node.New(Board(t, src), options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// Refused checks that the node of the Board of src is not built, by the
// board loader or by node.New, and that the error contains want.
func Refused(t testing.TB, src, want string) {
	t.Helper()
	cfg, err := parse(t, src)
	if err == nil {
		var n *node.Node
		if n, err = node.New(cfg, options()); err == nil {
			n.Close()
		}
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%s\n  err = %v\n want %q", src, err, want)
	}
}

// Run runs n and returns once it is ready. The returned stop ends it and
// fails t if Run returned an error; it is called when the test ends at the
// latest.
func Run(t testing.TB, n *node.Node) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, time.Now()) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	select {
	case <-n.Ready():
	case err := <-done:
		done <- err // for stop
		t.Fatalf("the node stopped before it was ready: %v", err)
	}
	return stop
}
