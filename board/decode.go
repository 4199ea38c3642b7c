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
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// Error is one problem in a board file. Load, Parse and Options.Decode
// return every problem they find, each as an *Error, joined with errors.Join
// and sorted by position, so errors.As finds the first and a caller that
// wants them all can unwrap the join.
type Error struct {
	File string // as given to Parse or Load
	Line int    // 1-based
	Col  int    // 1-based
	Path string // key path, e.g. "sensors[2].address"; empty for YAML syntax errors
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, e.Path, e.Msg)
}

// pos is a line:col in the file.
type pos struct{ line, col int }

// errList collects errors and joins them sorted by position.
type errList []*Error

func (l errList) join() error {
	if len(l) == 0 {
		return nil
	}
	s := slices.Clone(l)
	slices.SortStableFunc(s, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col), strings.Compare(a.Path, b.Path))
	})
	// The same mistake can be seen twice (e.g. a duplicate key found by the
	// duplicate pass and again while decoding); say it once.
	s = slices.CompactFunc(s, func(a, b *Error) bool { return *a == *b })
	errs := make([]error, len(s))
	for i, e := range s {
		errs[i] = e
	}
	return errors.Join(errs...)
}

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

func syntaxError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return &Error{File: file, Line: p.Line, Col: p.Column, Msg: "YAML syntax: " + ye.GetMessage()}
	}
	return &Error{File: file, Line: 1, Col: 1, Msg: "YAML syntax: " + err.Error()}
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

// decoder walks an AST into Go values, collecting errors and remembering
// where each key path was written so validation can point at it.
type decoder struct {
	file    string
	anchors map[string]ast.Node
	errs    errList
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

var (
	durationType  = reflect.TypeFor[time.Duration]()
	rawJSONType   = reflect.TypeFor[json.RawMessage]()
	optionsType   = reflect.TypeFor[Options]()
	textUnmarshal = reflect.TypeFor[encoding.TextUnmarshaler]()
)

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

// decode fills v from node n. path is the key path of n.
func (d *decoder) decode(n ast.Node, v reflect.Value, path string) {
	defer d.leave()
	if !d.enter(n, path) {
		return
	}
	d.where[path] = nodePos(n)
	n = d.resolve(n)
	p := nodePos(n)
	if _, ok := n.(*ast.AliasNode); ok {
		d.errorf(p, path, "%s", describe(n))
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

	t := v.Type()
	switch {
	case t == optionsType:
		o := Options{file: d.file, path: path, anchors: d.anchors}
		if _, ok := n.(*ast.MappingNode); !ok {
			d.errorf(p, path, "expected a mapping of kind-specific options, got %s", describe(n))
			return
		}
		o.node = n
		v.Set(reflect.ValueOf(o))
		// Record positions of the options' keys (for duplicate-key and
		// error reporting) without decoding them: their schema belongs to
		// the kind or plugin.
		d.decode(n, reflect.New(reflect.TypeFor[any]()).Elem(), path)
		return
	case t == rawJSONType:
		d.decodeJSON(n, v, path)
		return
	case t == durationType:
		d.decodeDuration(n, v, path)
		return
	case t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshal):
		s, ok := scalarText(n)
		if !ok {
			d.errorf(p, path, "expected a scalar, got %s", describe(n))
			return
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			d.errorf(p, path, "%v", err)
		}
		return
	}

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
		s, ok := n.(*ast.SequenceNode)
		if !ok {
			d.errorf(p, path, "expected a list, got %s", describe(n))
			return
		}
		out := reflect.MakeSlice(t, len(s.Values), len(s.Values))
		for i, e := range s.Values {
			el := out.Index(i)
			setElemDefaults(el)
			d.decode(e, el, indexPath(path, i))
		}
		v.Set(out)
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
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		i, ok := intValue(n)
		if !ok {
			d.errorf(p, path, "expected an integer, got %s", describe(n))
			return
		}
		if i.sign < 0 && i.mag > 1<<63 || i.sign >= 0 && i.mag > math.MaxInt64 || v.OverflowInt(i.int64()) {
			d.errorf(p, path, "%s does not fit in %s", n.GetToken().Value, t.Kind())
			return
		}
		v.SetInt(i.int64())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		i, ok := intValue(n)
		if !ok {
			d.errorf(p, path, "expected an integer, got %s", describe(n))
			return
		}
		if i.sign < 0 && i.mag != 0 {
			d.errorf(p, path, "must not be negative")
			return
		}
		if v.OverflowUint(i.mag) {
			d.errorf(p, path, "%s does not fit in %s", n.GetToken().Value, t.Kind())
			return
		}
		v.SetUint(i.mag)
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

func (d *decoder) decodeStruct(n ast.Node, v reflect.Value, path string) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.errorf(nodePos(n), path, "expected a mapping, got %s", describe(n))
		return
	}
	fields := structFields(v.Type())
	for _, e := range d.entries(m, path) {
		kp := joinKey(path, e.key)
		d.keyAt[kp] = e.keyPos
		f, ok := fields.byName[e.key]
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
		d.errorf(p, path, "duration %s has no unit; write e.g. 2s, 500ms or 1m30s", x.GetToken().Value)
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

// bigInt is an integer literal as sign and magnitude, so both int64 and
// uint64 ranges can be checked without loss.
type bigInt struct {
	sign int
	mag  uint64
}

func (b bigInt) int64() int64 {
	if b.sign < 0 {
		return -int64(b.mag-1) - 1
	}
	return int64(b.mag)
}

func intValue(n ast.Node) (bigInt, bool) {
	var text string
	switch v := n.(type) {
	case *ast.IntegerNode:
		text = v.GetToken().Value
	case *ast.StringNode:
		// goccy leaves integers too big for int64/uint64 as plain strings;
		// read them so the error says "does not fit" rather than "not an
		// integer".
		if !isPlain(v) {
			return bigInt{}, false
		}
		text = v.Value
	default:
		return bigInt{}, false
	}
	text = strings.ReplaceAll(text, "_", "")
	b := bigInt{sign: 1}
	if strings.HasPrefix(text, "-") {
		b.sign, text = -1, text[1:]
	} else {
		text = strings.TrimPrefix(text, "+")
	}
	if strings.HasPrefix(text, "0o") || strings.HasPrefix(text, "0O") {
		text = "0" + text[2:]
	}
	u, err := strconv.ParseUint(text, 0, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return bigInt{sign: b.sign, mag: math.MaxUint64}, true
		}
		return bigInt{}, false
	}
	b.mag = u
	return b, true
}

func floatValue(n ast.Node) (float64, bool) {
	switch v := n.(type) {
	case *ast.IntegerNode:
		i, ok := intValue(v)
		if !ok {
			return 0, false
		}
		f := float64(i.mag)
		if i.sign < 0 {
			f = -f
		}
		return f, true
	case *ast.FloatNode:
		return v.Value, true
	case *ast.InfinityNode:
		return v.Value, true
	case *ast.NanNode:
		return math.NaN(), true
	case *ast.StringNode:
		// goccy reads "1e3" as a string; accept plain (unquoted) numbers.
		if !isPlain(v) {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
		if err != nil || strings.ContainsAny(v.Value, "xXpP") || strings.EqualFold(v.Value, "nan") || strings.Contains(strings.ToLower(v.Value), "inf") {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

// fieldSet is the decoded-key view of a struct type.
type fieldSet struct {
	byName map[string][]int
	names  []string // in declaration order, for "did you mean"
}

// structFields follows goccy's tag rules: `yaml:"name"`, `yaml:"-"`,
// `yaml:",inline"` on embedded structs, and the lower-cased field name when
// there is no tag.
func structFields(t reflect.Type) fieldSet {
	fs := fieldSet{byName: map[string][]int{}}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			idx := append(slices.Clone(index), i)
			if strings.Contains(","+opts+",", ",inline,") {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if _, dup := fs.byName[name]; !dup {
				fs.names = append(fs.names, name)
			}
			fs.byName[name] = idx
		}
	}
	walk(t, nil)
	return fs
}

// suggest says which known key was probably meant.
func suggest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if dd := editDistance(key, k); dd < bestD {
			best, bestD = k, dd
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(known) > 0 && len(known) <= 12 {
		return " (known keys: " + strings.Join(known, ", ") + ")"
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
