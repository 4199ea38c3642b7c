package board

// A strict decoder over goccy/go-yaml's AST.
//
// goccy's own decoder stops at the first problem and does not say which key
// path it was on. A robot engineer editing a board file wants every mistake at
// once, each with file:line:col and the key, so this file walks the parsed
// AST itself (goccy still does the lexing and parsing, which is where the
// line:col positions come from) and fills Go values through reflection,
// honouring the same `yaml:"name,omitempty,inline"` tags goccy's encoder
// uses for Marshal. The same walker decodes the kind-specific Options blocks,
// so a sensor kind's options are exactly as strict as the board file.

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// decoder walks an AST into Go values, collecting errors and remembering
// where each key path was written so validation can point at it.
type decoder struct {
	file    string
	anchors map[string]ast.Node
	// src and tree take the Options blocks a board's decoding meets.
	src  *optionSource
	tree *optionTree
	errs errList
	// where maps a key path to the position of its value (and keyAt to the
	// position of its key); validation looks paths up here.
	where map[string]pos
	keyAt map[string]pos
	// bad holds the paths that failed to decode; once validating, problems
	// at those paths (or below them) are consequences, not news.
	bad        map[string]bool
	validating bool
	// depth and visits bound alias expansion: a recursive alias or a
	// "billion laughs" file is an error, not a stack overflow or a hang.
	depth, visits int
	exhausted     bool
}

const (
	maxDepth  = 200
	maxVisits = 1 << 17 // a real board file has a few hundred nodes
)

// enter accounts for one node visit; it reports false (once, with an error)
// when the file nests or expands beyond reason.
func (d *decoder) enter(n ast.Node, path string) bool {
	d.depth++
	d.visits++
	if d.depth <= maxDepth && d.visits <= maxVisits {
		return true
	}
	if !d.exhausted {
		d.exhausted = true
		d.errorf(nodePos(n), path, "nested or expanded too deeply (a recursive alias?)")
	}
	return false
}

func (d *decoder) leave() { d.depth-- }

func newDecoder(file string, anchors map[string]ast.Node) *decoder {
	return &decoder{file: file, anchors: anchors, where: map[string]pos{}, keyAt: map[string]pos{}, bad: map[string]bool{}}
}

func (d *decoder) errorf(p pos, path, format string, args ...any) {
	if d.validating {
		for q := path; q != ""; q = parentPath(q) {
			if d.bad[q] {
				return
			}
		}
	} else {
		d.bad[path] = true
	}
	d.errs = append(d.errs, &Error{File: d.file, Line: p.line, Col: p.col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// at reports the best position for path: its value if written, else the
// nearest written ancestor (a missing key is reported on its parent), else the
// top of the file.
func (d *decoder) at(path string) pos {
	for p := path; p != ""; p = parentPath(p) {
		if q, ok := d.where[p]; ok {
			return q
		}
	}
	return pos{1, 1}
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

// joinKey appends a mapping key to a path. Keys that are not plain
// identifiers (e.g. "front_cam.snapshot") are quoted so the path stays
// unambiguous.
func joinKey(path, key string) string {
	plain := key != ""
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			plain = false
			break
		}
	}
	if !plain {
		return fmt.Sprintf("%s[%q]", path, key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func indexPath(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

var (
	durationType  = reflect.TypeFor[time.Duration]()
	rawJSONType   = reflect.TypeFor[json.RawMessage]()
	optionsType   = reflect.TypeFor[Options]()
	textUnmarshal = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decode fills v from node n. path is the key path of n.
func (d *decoder) decode(n ast.Node, v reflect.Value, path string) {
	defer d.leave()
	if !d.enter(n, path) {
		return
	}
	d.where[path] = nodePos(n)
	n = d.resolve(n)
	if _, ok := n.(*ast.AliasNode); ok {
		d.errorf(nodePos(n), path, "%s", describe(n))
		return
	}
	// null means "not given": pointers, maps, slices and interfaces become
	// nil; everything else keeps its default.
	if _, ok := n.(*ast.NullNode); ok || n == nil {
		switch v.Kind() {
		case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
			v.SetZero()
		}
		if v.Type() == optionsType {
			v.SetZero()
		}
		return
	}
	if !d.decodeSpecial(n, v, path) {
		d.decodeKind(n, v, path)
	}
}

// decodeSpecial decodes the types that have a form of their own in a board
// file (kind-specific options, raw JSON, durations, text values); false:
// v is none of them.
func (d *decoder) decodeSpecial(n ast.Node, v reflect.Value, path string) bool {
	t, p := v.Type(), nodePos(n)
	switch {
	case t == optionsType:
		m, ok := n.(*ast.MappingNode)
		if !ok {
			d.errorf(p, path, "expected a mapping of kind-specific options, got %s", describe(n))
			return true
		}
		if d.tree != nil { // nil: a block inside a block, decoded as a whole
			d.tree.blocks[path] = n
			v.Set(reflect.ValueOf(Options{src: d.src, path: path, empty: len(m.Values) == 0}))
		}
		// Record positions of the options' keys (for duplicate-key and
		// error reporting) without decoding them: their schema belongs to
		// the kind or plugin.
		d.decode(n, reflect.New(reflect.TypeFor[any]()).Elem(), path)
	case t == rawJSONType:
		d.decodeJSON(n, v, path)
	case t == durationType:
		d.decodeDuration(n, v, path)
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshal):
		s, ok := scalarText(n)
		if !ok {
			d.errorf(p, path, "expected a scalar, got %s", describe(n))
			return true
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			d.errorf(p, path, "%v", err)
		}
	default:
		return false
	}
	return true
}

// decodeKind decodes by v's kind: containers by their elements, scalars by
// their YAML form.
func (d *decoder) decodeKind(n ast.Node, v reflect.Value, path string) {
	t, p := v.Type(), nodePos(n)
	switch v.Kind() {
	case reflect.Pointer:
		nv := reflect.New(t.Elem())
		if !v.IsNil() {
			nv.Elem().Set(v.Elem())
		}
		d.decode(n, nv.Elem(), path)
		v.Set(nv)
	case reflect.Struct:
		d.decodeStruct(n, v, path)
	case reflect.Map:
		d.decodeMap(n, v, path)
	case reflect.Slice:
		d.decodeSlice(n, v, path)
	case reflect.String:
		s, ok := scalarText(n)
		if !ok {
			d.errorf(p, path, "expected a string, got %s", describe(n))
			return
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			d.errorf(p, path, "expected true or false, got %s", describe(n))
			return
		}
		v.SetBool(b.Value)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		d.decodeInteger(n, v, path)
	case reflect.Float32, reflect.Float64:
		f, ok := floatValue(n)
		if !ok {
			d.errorf(p, path, "expected a number, got %s", describe(n))
			return
		}
		if math.IsNaN(f) {
			d.errorf(p, path, "expected a number, got .nan")
			return
		}
		v.SetFloat(f)
	case reflect.Interface:
		if t.NumMethod() != 0 {
			d.errorf(p, path, "cannot decode into %s", t)
			return
		}
		if g := d.generic(n, path); g != nil {
			v.Set(reflect.ValueOf(g))
		}
	default:
		d.errorf(p, path, "cannot decode into %s", t)
	}
}

func (d *decoder) decodeSlice(n ast.Node, v reflect.Value, path string) {
	s, ok := n.(*ast.SequenceNode)
	if !ok {
		d.errorf(nodePos(n), path, "expected a list, got %s", describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(s.Values), len(s.Values))
	for i, e := range s.Values {
		el := out.Index(i)
		setElemDefaults(el)
		d.decode(e, el, indexPath(path, i))
	}
	v.Set(out)
}

// decodeInteger decodes a signed or unsigned integer, refusing what does
// not fit v's size.
func (d *decoder) decodeInteger(n ast.Node, v reflect.Value, path string) {
	p := nodePos(n)
	i, ok := intValue(n)
	if !ok {
		d.errorf(p, path, "expected an integer, got %s", describe(n))
		return
	}
	if v.CanUint() {
		switch {
		case i.sign < 0 && i.mag != 0:
			d.errorf(p, path, "must not be negative")
		case v.OverflowUint(i.mag):
			d.errorf(p, path, "the number does not fit in %s", v.Kind())
		default:
			v.SetUint(i.mag)
		}
		return
	}
	if i.sign < 0 && i.mag > 1<<63 || i.sign >= 0 && i.mag > math.MaxInt64 || v.OverflowInt(i.int64()) {
		d.errorf(p, path, "the number does not fit in %s", v.Kind())
		return
	}
	v.SetInt(i.int64())
}

func (d *decoder) decodeStruct(n ast.Node, v reflect.Value, path string) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.errorf(nodePos(n), path, "expected a mapping, got %s", describe(n))
		return
	}
	fields := structFields(v.Type())
	retired := retiredKeys(v)
	for _, e := range d.entries(m, path) {
		kp := joinKey(path, e.key)
		d.keyAt[kp] = e.keyPos
		f, ok := fields.byName[e.key]
		if why, gone := retired[e.key]; !ok && gone {
			d.errorf(e.keyPos, kp, "%s", why)
			continue
		}
		if !ok {
			d.errorf(e.keyPos, kp, "unknown key%s", suggest(e.key, fields.names))
			continue
		}
		d.decode(e.value, v.FieldByIndex(f), kp)
	}
}

func (d *decoder) decodeMap(n ast.Node, v reflect.Value, path string) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.errorf(nodePos(n), path, "expected a mapping, got %s", describe(n))
		return
	}
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		d.errorf(nodePos(n), path, "cannot decode into %s", t)
		return
	}
	// Decoding over a map that already holds defaults keeps the defaults of
	// keys the file does not mention (e.g. permissions for one caller).
	if v.IsNil() {
		v.Set(reflect.MakeMap(t))
	}
	for _, e := range d.entries(m, path) {
		kp := joinKey(path, e.key)
		d.keyAt[kp] = e.keyPos
		el := reflect.New(t.Elem()).Elem()
		if old := v.MapIndex(reflect.ValueOf(e.key).Convert(t.Key())); old.IsValid() {
			el.Set(old)
		} else {
			setElemDefaults(el)
		}
		d.decode(e.value, el, kp)
		v.SetMapIndex(reflect.ValueOf(e.key).Convert(t.Key()), el)
	}
}

// generic turns a node into plain Go values (map[string]any, []any, string,
// bool, int64/uint64, float64), checking keys as it goes.
func (d *decoder) generic(n ast.Node, path string) any {
	defer d.leave()
	if !d.enter(n, path) {
		return nil
	}
	d.where[path] = nodePos(n)
	n = d.resolve(n)
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return nil
	case *ast.MappingNode:
		out := map[string]any{}
		for _, e := range d.entries(v, path) {
			kp := joinKey(path, e.key)
			d.keyAt[kp] = e.keyPos
			out[e.key] = d.generic(e.value, kp)
		}
		return out
	case *ast.SequenceNode:
		out := make([]any, len(v.Values))
		for i, e := range v.Values {
			out[i] = d.generic(e, indexPath(path, i))
		}
		return out
	case *ast.LiteralNode:
		s, _ := scalarText(v)
		return s
	case *ast.AliasNode:
		d.errorf(nodePos(v), path, "%s", describe(v))
		return nil
	case ast.ScalarNode:
		return v.GetValue()
	}
	d.errorf(nodePos(n), path, "unsupported YAML node %s", n.Type())
	return nil
}

// decodeJSON turns any YAML mapping into compact JSON with sorted keys (the
// form encoding/json produces), which is what tools receive as params.
func (d *decoder) decodeJSON(n ast.Node, v reflect.Value, path string) {
	if _, ok := n.(*ast.MappingNode); !ok {
		d.errorf(nodePos(n), path, "expected a mapping, got %s", describe(n))
		return
	}
	g := d.generic(n, path)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // keep "a<b" readable in check --print
	if err := enc.Encode(g); err != nil {
		d.errorf(nodePos(n), path, "not representable as JSON: %v", err)
		return
	}
	v.SetBytes(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func (d *decoder) decodeDuration(n ast.Node, v reflect.Value, path string) {
	p := nodePos(n)
	switch x := n.(type) {
	case *ast.IntegerNode:
		if i, ok := intValue(x); ok && i.mag == 0 {
			v.SetInt(0)
			return
		}
		d.errorf(p, path, "a duration needs a unit; write e.g. 2s, 500ms or 1m30s")
		return
	case *ast.StringNode:
		dur, err := time.ParseDuration(x.Value)
		if err != nil {
			d.errorf(p, path, "not a duration; write e.g. 2s, 500ms or 1m30s")
			return
		}
		v.SetInt(int64(dur))
		return
	}
	d.errorf(p, path, "expected a duration such as 2s, got %s", describe(n))
}
