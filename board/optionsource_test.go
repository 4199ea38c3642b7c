package board

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"testing"
	"weak"

	"github.com/goccy/go-yaml/ast"
)

// blocksOf is what a board's Options blocks say: each decoded, an error
// placed at a key of each, and the whole board printed.
func blocksOf(t *testing.T, c *Config) []string {
	t.Helper()
	var out []string
	see := func(o Options) {
		var v any
		err := o.Decode(&v)
		out = append(out, fmt.Sprintf("%s: %v %v | %v", o.path, v, err, o.Errorf("mode", "too fast")))
	}
	for _, s := range c.Sensors {
		see(s.Options)
	}
	for _, a := range c.Actuators {
		see(a.Options)
		see(a.Limits)
	}
	for _, name := range slices.Sorted(maps.Keys(c.Plugins)) {
		see(c.Plugins[name])
	}
	y, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return append(out, string(y))
}

// Once released, nothing holds the parsed YAML (the collector takes it),
// and the blocks decode, place errors and print as they did, anchors and
// merge keys across the file included.
func TestReleaseTrees(t *testing.T) {
	c, err := Parse("everything.yaml", []byte(everything))
	if err != nil {
		t.Fatal(err)
	}
	before := blocksOf(t, c)
	tree := weak.Make(c.opts.tree)
	block, ok := c.opts.tree.blocks["actuators[1].limits"].(*ast.MappingNode)
	if !ok {
		t.Fatal("no parsed block for actuators[1].limits")
	}
	node := weak.Make(block)
	block = nil
	c.ReleaseTrees()
	runtime.GC()
	if tree.Value() != nil || node.Value() != nil {
		t.Fatal("the parsed YAML is still held after ReleaseTrees")
	}
	after := blocksOf(t, c)
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("after ReleaseTrees:\n%v\nbefore:\n%v", after, before)
	}
	runtime.GC() // the tree parsed again goes too
	if c.opts.again.Value() != nil {
		t.Fatal("the tree parsed again outlived a collection")
	}
	runtime.KeepAlive(c)
}
