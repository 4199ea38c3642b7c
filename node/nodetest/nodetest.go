// Package nodetest builds a whole node on the sim board for the tests of
// the packages it assembles (plugins, tools): the real board loader, the
// real runtime, no store, logs discarded.
package nodetest

import (
	"log/slog"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/node"
)

// New builds the node of a sim board whose file is the device line, a
// temporary data_dir and then src (the rest of the board, YAML). The node
// is closed when the test ends.
func New(t testing.TB, src string) *node.Node {
	t.Helper()
	cfg, err := board.Parse("t.yaml", []byte("device: {id: t, platform: sim}\ndata_dir: "+t.TempDir()+"\n"+src))
	if err != nil {
		t.Fatal(err)
	}
	n, err := node.New(cfg, node.Options{Log: slog.New(slog.DiscardHandler), NoStore: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}
