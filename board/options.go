package board

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
)

// Options is a kind- or plugin-specific `options:` block, kept as parsed YAML
// until the kind that owns it decodes it. The board package cannot know the
// schema of every sensor kind or plugin (kinds register themselves, Caddy
// style), yet a typo in an option must still be reported with its line and
// column; keeping the node keeps the positions.
type Options struct {
	node    ast.Node // a *ast.MappingNode, or nil when absent
	file    string
	path    string // key path of the block, e.g. "sensors[0].options"
	anchors map[string]ast.Node
}

// IsZero reports whether the block is absent or empty. It also tells the
// YAML encoder to leave empty blocks out of Marshal's output.
func (o Options) IsZero() bool {
	if o.node == nil {
		return true
	}
	m, ok := o.node.(*ast.MappingNode)
	return ok && len(m.Values) == 0
}

// Decode fills v (a non-nil pointer, typically to the kind's options struct
// holding its defaults) from the block, as strictly as the board file itself:
// unknown keys, wrong types and bad durations are errors of the form
// "file:line:col: sensors[0].options.gain: unknown key". Keys that are absent
// leave v's values alone, so an empty block decodes nothing and keeps every
// default. Every problem is reported, joined and sorted by position.
func (o Options) Decode(v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return errors.New("board: Options.Decode needs a non-nil pointer")
	}
	if o.IsZero() {
		return nil
	}
	d := newDecoder(o.file, o.anchors)
	d.decode(o.node, rv.Elem(), o.path)
	return d.errs.join()
}

// Errorf reports a problem with the value of one key of the block (a path
// below it such as "channels[1].range" works too) as an *Error at that
// key's position, in the same "file:line:col: path: msg" form as the
// decoding errors: for checks a kind makes after decoding (a value out of
// range, two options that contradict each other). A key that is not
// written is reported at the block; without a block the error has no
// position.
func (o Options) Errorf(key, format string, args ...any) error {
	if o.node == nil { // no block: nothing to point at
		return fmt.Errorf("options.%s: %s", key, fmt.Sprintf(format, args...))
	}
	path := o.path + "." + key
	d := newDecoder(o.file, o.anchors)
	d.generic(o.node, o.path) // records where each key was written
	p := d.at(path)
	return &Error{File: o.file, Line: p.line, Col: p.col, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// MarshalYAML writes the block back in its original key order, so
// `edgeagent check --print` shows the options as written.
func (o Options) MarshalYAML() (any, error) {
	if o.IsZero() {
		return yaml.MapSlice{}, nil // an empty plugin block prints as {}
	}
	d := newDecoder(o.file, o.anchors)
	return d.ordered(o.node), nil
}

// ordered is like generic but keeps mapping order (yaml.MapSlice), for
// printing.
func (d *decoder) ordered(n ast.Node) any {
	defer d.leave()
	if !d.enter(n, "") {
		return nil
	}
	n = d.resolve(n)
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode:
		var out yaml.MapSlice
		for _, e := range d.entries(v, "") {
			out = append(out, yaml.MapItem{Key: e.key, Value: d.ordered(e.value)})
		}
		if out == nil {
			out = yaml.MapSlice{}
		}
		return out
	case *ast.SequenceNode:
		out := make([]any, len(v.Values))
		for i, e := range v.Values {
			out[i] = d.ordered(e)
		}
		return out
	case *ast.LiteralNode:
		s, _ := scalarText(v)
		return s
	case ast.ScalarNode:
		return v.GetValue()
	}
	return nil
}
