package board

import (
	"sync"
	"weak"

	"github.com/goccy/go-yaml/ast"
)

// optionSource is where a parsed file's Options blocks come from. While
// the board is being built (the kinds and plugins decode their blocks) it
// holds the parsed YAML; ReleaseTrees drops that, as ~0.25 MB of heap on
// the sim board (goccy's nodes link every token of the file), and a block
// asked for afterwards (a reload that falls back to this board, a
// recording's copy of the board, the dashboard's config page) is parsed
// again from the file's bytes. The tree parsed again is held only weakly:
// it serves the blocks one operation asks for and goes with the next
// collection.
type optionSource struct {
	file string
	data []byte

	mu    sync.Mutex
	tree  *optionTree              // nil once released
	again weak.Pointer[optionTree] // the tree parsed again after release
}

// optionTree is a parse of the file: its Options blocks by key path, and
// the anchors they may name.
type optionTree struct {
	blocks  map[string]ast.Node
	anchors map[string]ast.Node
}

// block returns the parsed block at path, with the file's anchors.
func (s *optionSource) block(path string) (ast.Node, map[string]ast.Node, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tree
	if t == nil {
		t = s.again.Value()
	}
	if t == nil {
		var err error
		if t, err = s.parse(); err != nil {
			return nil, nil, err
		}
		s.again = weak.Make(t)
	}
	return t.blocks[path], t.anchors, nil
}

// parse parses the file again and walks it as Parse did, collecting the
// blocks. It parsed before, so it parses now.
func (s *optionSource) parse() (*optionTree, error) {
	body, anchors, err := parseDoc(s.file, s.data)
	if err != nil {
		return nil, err
	}
	t := &optionTree{blocks: map[string]ast.Node{}, anchors: anchors}
	if body != nil {
		d := newDecoder(s.file, anchors)
		d.src, d.tree = s, t
		d.decode(body, reflectValue(defaultConfig()), "")
	}
	return t, nil
}

// ReleaseTrees drops the parsed YAML that c's Options blocks were decoded
// from. Call it once every kind and plugin has decoded its block (node.New
// does): the blocks still decode, print and place errors as before, from
// a parse of the file's bytes.
func (c *Config) ReleaseTrees() {
	if c.opts == nil {
		return
	}
	c.opts.mu.Lock()
	c.opts.tree = nil
	c.opts.mu.Unlock()
}
