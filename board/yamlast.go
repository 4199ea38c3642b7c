package board

// Reading the parsed YAML as a reader sees it: one document, anchors and
// aliases followed, merge keys expanded, duplicate keys reported, and every
// node placed at the line:col a person would point at.

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// parseDoc parses data into a single document body and the anchors it
// defines. A syntax error is returned as an *Error with goccy's position.
func parseDoc(file string, data []byte) (ast.Node, map[string]ast.Node, error) {
	// Duplicate keys are reported by our own pass (with the key path), not by
	// the parser, which would stop at the first one.
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, nil, syntaxError(file, err)
	}
	var body ast.Node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if body != nil {
			p := nodePos(d.Body)
			return nil, nil, &Error{File: file, Line: p.line, Col: p.col, Msg: "a board file holds one YAML document, found a second"}
		}
		body = d.Body
	}
	anchors := map[string]ast.Node{}
	if body != nil {
		collectAnchors(body, anchors)
	}
	return body, anchors, nil
}

func collectAnchors(n ast.Node, into map[string]ast.Node) {
	ast.Walk(visitFunc(func(n ast.Node) {
		if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil {
			into[a.Name.GetToken().Value] = a.Value
		}
	}), n)
}

type visitFunc func(ast.Node)

func (f visitFunc) Visit(n ast.Node) ast.Visitor { f(n); return f }

// nodePos is where a node starts as a reader sees it: for a block mapping
// goccy's token is the first ':' so use the first key instead.
func nodePos(n ast.Node) pos {
	switch v := n.(type) {
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return nodePos(v.Values[0].Key)
		}
	case *ast.MappingValueNode:
		return nodePos(v.Key)
	case *ast.DocumentNode:
		if v.Body != nil {
			return nodePos(v.Body)
		}
	}
	if n == nil || n.GetToken() == nil {
		return pos{1, 1}
	}
	p := n.GetToken().Position
	return pos{p.Line, p.Column}
}

// resolve follows anchors, aliases and tags to the node that holds the value.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for depth := 0; n != nil && depth < 64; depth++ {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.AliasNode:
			name := v.Value.GetToken().Value
			t, ok := d.anchors[name]
			if !ok {
				return v // reported by the caller as an unknown alias
			}
			n = t
		case *ast.TagNode:
			n = v.Value
		default:
			return n
		}
	}
	return n
}

// entry is one key: value of a mapping after merge keys are expanded.
type entry struct {
	key    string
	keyPos pos
	value  ast.Node
}

// entries lists a mapping's key/values, expanding YAML merge keys (<<: *base)
// so that explicit keys override merged ones. It reports duplicate keys.
func (d *decoder) entries(m *ast.MappingNode, path string) []entry {
	defer d.leave()
	if !d.enter(m, path) {
		return nil
	}
	var merged, own []entry
	seen := map[string]pos{}
	for _, mv := range m.Values {
		if mv.Key != nil && mv.Key.IsMergeKey() {
			src := d.resolve(mv.Value)
			var maps []*ast.MappingNode
			switch s := src.(type) {
			case *ast.MappingNode:
				maps = append(maps, s)
			case *ast.SequenceNode:
				for _, e := range s.Values {
					if mm, ok := d.resolve(e).(*ast.MappingNode); ok {
						maps = append(maps, mm)
					}
				}
			}
			if len(maps) == 0 {
				d.errorf(nodePos(mv.Value), path, "merge key << needs a mapping or an alias of one")
			}
			for _, mm := range maps {
				merged = append(merged, d.entries(mm, path)...)
			}
			continue
		}
		k, ok := d.keyText(mv.Key)
		kp := nodePos(mv.Key)
		if !ok {
			d.errorf(kp, path, "mapping keys must be plain scalars")
			continue
		}
		if first, dup := seen[k]; dup {
			d.errorf(kp, joinKey(path, k), "duplicate key (first at line %d)", first.line)
			continue
		}
		seen[k] = kp
		own = append(own, entry{key: k, keyPos: kp, value: mv.Value})
	}
	if len(merged) == 0 {
		return own
	}
	out := make([]entry, 0, len(merged)+len(own))
	for _, e := range merged {
		if _, overridden := seen[e.key]; !overridden {
			seen[e.key] = e.keyPos
			out = append(out, e)
		}
	}
	return append(out, own...)
}

func (d *decoder) keyText(k ast.MapKeyNode) (string, bool) {
	n := d.resolve(k)
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode:
		return v.GetToken().Value, true
	}
	return "", false
}

// describe names what a node is, for "expected X, got Y" messages.
func describe(n ast.Node) string {
	// The kind only, never the value: a board error can reach whoever
	// asked for a reload, and the file may not be a board file at all.
	switch n.(type) {
	case *ast.MappingNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "nothing (null)"
	case *ast.BoolNode:
		return "a boolean"
	case *ast.IntegerNode, *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return "a number"
	case *ast.StringNode:
		return "a string"
	case *ast.LiteralNode:
		return "a block string"
	case *ast.AliasNode:
		return "an unknown alias"
	}
	return fmt.Sprintf("%s", n.Type())
}

// scalarText is the text of a scalar node, with ok false for mappings,
// lists and null.
func scalarText(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		if v.Value == nil {
			return "", true
		}
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return v.GetToken().Value, true
	}
	return "", false
}

// isPlain reports whether a string node was written without quotes (so
// "1e-3" may be read as a number but '"1e-3"' stays a string).
func isPlain(n ast.Node) bool {
	s, ok := n.(*ast.StringNode)
	return ok && s.GetToken() != nil && s.GetToken().Type == token.StringType
}
