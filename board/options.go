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
//
// The node itself is kept by the file's optionSource, which lets it go
// once the board is built (Config.ReleaseTrees).
type Options struct {
	src   *optionSource // nil when absent
	path  string        // key path of the block, e.g. "sensors[0].options"
	empty bool          // written as an empty mapping
}

// IsZero reports whether the block is absent or empty. It also tells the
// YAML encoder to leave empty blocks out of Marshal's output.
func (o Options) IsZero() bool { return o.src == nil || o.empty }

// tree returns the block's node and the file's anchors.
func (o Options) tree() (ast.Node, map[string]ast.Node, error) {
	n, anchors, err := o.src.block(o.path)
	if err == nil && n == nil {
		err = errors.New("board: an options block is missing from its file's parse") // a bug, not a user's mistake
	}
	return n, anchors, err
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
	n, anchors, err := o.tree()
	if err != nil {
		return err
	}
	d := newDecoder(o.src.file, anchors)
	d.decode(n, rv.Elem(), o.path)
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
	msg := fmt.Sprintf(format, args...)
	if o.src == nil { // no block: nothing to point at
		return fmt.Errorf("options.%s: %s", key, msg)
	}
	path := o.path + "." + key
	n, anchors, err := o.tree()
	if err != nil {
		return fmt.Errorf("%s: %s (%w)", path, msg, err)
	}
	d := newDecoder(o.src.file, anchors)
	d.generic(n, o.path) // records where each key was written
	p := d.at(path)
	return &Error{File: o.src.file, Line: p.line, Col: p.col, Path: path, Msg: msg}
}

// MarshalYAML writes the block back in its original key order, so
// `edgeagent check --print` shows the options as written.
func (o Options) MarshalYAML() (any, error) {
	if o.IsZero() {
		return yaml.MapSlice{}, nil // an empty plugin block prints as {}
	}
	n, anchors, err := o.tree()
	if err != nil {
		return nil, err
	}
	d := newDecoder(o.src.file, anchors)
	return d.ordered(n), nil
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
