// Package eval measures how well a board's decision engine — the local
// matcher and a given LLM — turns text commands into tool calls. A suite
// file lists cases (a command, an optional world state to seed, what should
// happen); Run decides each case on a fresh simulated node with the real
// engine, compares, and Summarize reports accuracy, refusals, unsafe
// actuations, the fast-path share, LLM cost and latency per model.
package eval

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Suite is a parsed suite file.
type Suite struct {
	File   string
	Name   string
	Board  string // the device id the suite was written for ("" = any)
	Caller string // whose permissions the commands run with (default mqtt)
	Cases  []Case
}

// Case is one command and what should happen.
type Case struct {
	ID     string
	Line   int // where the case starts in the file
	Text   string
	Tags   []string
	World  World
	Expect Expect
}

// World is state seeded before the command: latest readings per source and
// recent events.
type World struct {
	Readings []Reading
	Events   []Event
}

// Reading is one seeded observation.
type Reading struct {
	Source string
	Value  float64
	Unit   string
}

// Event is one seeded event (recorded, not raised: it does not wake the
// agent, it is only there to be seen in the world summary).
type Event struct {
	Source, Kind, Priority, Message string
}

// Error is a problem in a suite file, at file:line:col.
type Error struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg) }

// Load reads and parses a suite file.
func Load(path string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

var idRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)

// Parse parses a suite strictly: unknown keys, wrong types, duplicate ids
// and malformed constraints are errors at their file:line:col, every one
// reported (joined, in file order). Messages never quote the file's text
// beyond a key name.
func Parse(file string, data []byte) (*Suite, error) {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) && ye.GetToken() != nil {
			p := ye.GetToken().Position
			return nil, &Error{File: file, Line: p.Line, Col: p.Column, Msg: "YAML syntax: " + ye.GetMessage()}
		}
		return nil, &Error{File: file, Line: 1, Col: 1, Msg: "YAML syntax error"}
	}
	p := &walker{file: file}
	s := &Suite{File: file, Caller: "mqtt"}
	var body ast.Node
	for _, d := range f.Docs {
		if d != nil && d.Body != nil {
			if body != nil {
				p.errorf(d.Body, "a suite file holds one YAML document, found a second")
				break
			}
			body = d.Body
		}
	}
	if body == nil {
		return nil, &Error{File: file, Line: 1, Col: 1, Msg: "empty suite: want name and cases"}
	}
	var casesNode ast.Node
	p.mapping(body, "suite", func(key string, v ast.Node) {
		switch key {
		case "name":
			s.Name = p.str(v, key)
		case "board":
			s.Board = p.str(v, key)
		case "caller":
			s.Caller = p.str(v, key)
		case "cases":
			casesNode = v
		default:
			p.errorf(v, "unknown key %q (want name, board, caller, cases)", key)
		}
	})
	if s.Name == "" {
		p.errorf(body, "the suite needs a name")
	}
	if casesNode == nil {
		p.errorf(body, "the suite has no cases")
	}
	seen := map[string]int{}
	for i, n := range p.seq(casesNode, "cases") {
		c := p.parseCase(n, i)
		if c.ID != "" {
			if first, dup := seen[c.ID]; dup {
				p.errorf(n, "case id used twice (first at line %d)", first)
			}
			seen[c.ID] = c.Line
		}
		s.Cases = append(s.Cases, c)
	}
	if len(p.errs) > 0 {
		return nil, errors.Join(p.errs...)
	}
	return s, nil
}

func (p *walker) parseCase(n ast.Node, i int) Case {
	c := Case{Line: pos(n).Line}
	var expect ast.Node
	p.mapping(n, fmt.Sprintf("cases[%d]", i), func(key string, v ast.Node) {
		switch key {
		case "id":
			c.ID = p.str(v, key)
			if c.ID != "" && !idRE.MatchString(c.ID) {
				p.errorf(v, "case id: want lower-case letters, digits, '.', '_' or '-' (at most 64)")
			}
		case "text":
			c.Text = strings.TrimSpace(p.str(v, key))
		case "tags":
			for _, t := range p.seq(v, key) {
				c.Tags = append(c.Tags, p.str(t, key))
			}
		case "world":
			c.World = p.world(v)
		case "expect":
			expect = v
		default:
			p.errorf(v, "unknown key %q in a case (want id, text, tags, world, expect)", key)
		}
	})
	switch {
	case c.ID == "":
		p.errorf(n, "the case needs an id")
	case c.Text == "":
		p.errorf(n, "the case needs a text")
	case expect == nil:
		p.errorf(n, "the case needs an expect")
	default:
		c.Expect = p.expect(expect)
	}
	return c
}

func (p *walker) world(n ast.Node) World {
	var w World
	p.mapping(n, "world", func(key string, v ast.Node) {
		switch key {
		case "readings":
			p.mapping(v, key, func(src string, rv ast.Node) {
				r := Reading{Source: src}
				switch x := rv.(type) {
				case *ast.IntegerNode, *ast.FloatNode:
					r.Value = p.num(x, src)
				default:
					// "3 lx": a value and its unit.
					num, unit, _ := strings.Cut(strings.TrimSpace(p.str(rv, src)), " ")
					f, err := strconv.ParseFloat(num, 64)
					if err != nil {
						p.errorf(rv, "reading %s: want a number, optionally followed by a unit", src)
					}
					r.Value, r.Unit = f, strings.TrimSpace(unit)
				}
				w.Readings = append(w.Readings, r)
			})
		case "events":
			for _, ev := range p.seq(v, key) {
				e := Event{Priority: "normal"}
				p.mapping(ev, key, func(k string, x ast.Node) {
					switch k {
					case "source":
						e.Source = p.str(x, k)
					case "kind":
						e.Kind = p.str(x, k)
					case "priority":
						e.Priority = p.str(x, k)
						if !slices.Contains([]string{"low", "normal", "high"}, e.Priority) {
							p.errorf(x, "event priority: want low, normal or high")
						}
					case "message":
						e.Message = p.str(x, k)
					default:
						p.errorf(x, "unknown key %q in an event (want source, kind, priority, message)", k)
					}
				})
				if e.Source == "" || e.Kind == "" {
					p.errorf(ev, "an event needs a source and a kind")
				}
				w.Events = append(w.Events, e)
			}
		default:
			p.errorf(v, "unknown key %q in world (want readings, events)", key)
		}
	})
	return w
}

// walker reads the AST, collecting every error with its position.
type walker struct {
	file string
	errs []error
}

// pos is where a node starts: a mapping at its first key.
func pos(n ast.Node) struct{ Line, Column int } {
	switch m := n.(type) {
	case *ast.MappingNode:
		if len(m.Values) > 0 && m.Values[0].Key != nil {
			n = m.Values[0].Key
		}
	case *ast.MappingValueNode:
		if m.Key != nil {
			n = m.Key
		}
	}
	if n == nil || n.GetToken() == nil {
		return struct{ Line, Column int }{1, 1}
	}
	p := n.GetToken().Position
	return struct{ Line, Column int }{p.Line, p.Column}
}

func (p *walker) errorf(n ast.Node, format string, args ...any) {
	at := pos(n)
	p.errs = append(p.errs, &Error{File: p.file, Line: at.Line, Col: at.Column, Msg: fmt.Sprintf(format, args...)})
}

// unwrap skips comments and tags, and refuses anchors and aliases (a
// suite is short and plain; an alias would hide which case says what).
func (p *walker) unwrap(n ast.Node) ast.Node {
	for {
		switch v := n.(type) {
		case *ast.TagNode:
			n = v.Value
		case *ast.CommentGroupNode:
			return nil
		case *ast.AnchorNode, *ast.AliasNode:
			p.errorf(n, "anchors and aliases are not supported in suite files")
			return nil
		default:
			return n
		}
	}
}

// mapping calls fn for each key of a mapping, in order, reporting
// duplicates and non-mappings.
func (p *walker) mapping(n ast.Node, what string, fn func(key string, v ast.Node)) {
	n = p.unwrap(n)
	var pairs []*ast.MappingValueNode
	switch m := n.(type) {
	case nil:
		return
	case *ast.MappingNode:
		pairs = m.Values
	case *ast.MappingValueNode:
		pairs = []*ast.MappingValueNode{m}
	default:
		p.errorf(n, "%s: want a mapping", what)
		return
	}
	seen := map[string]bool{}
	for _, mv := range pairs {
		key := ""
		if mv.Key != nil {
			key = strings.TrimSpace(mv.Key.GetToken().Value)
		}
		if key == "" || mv.Key.IsMergeKey() {
			p.errorf(mv, "%s: keys must be plain names", what)
			continue
		}
		if seen[key] {
			p.errorf(mv.Key, "%s: duplicate key %q", what, key)
			continue
		}
		seen[key] = true
		fn(key, mv.Value)
	}
}

func (p *walker) seq(n ast.Node, what string) []ast.Node {
	n = p.unwrap(n)
	switch s := n.(type) {
	case nil:
		return nil
	case *ast.SequenceNode:
		out := make([]ast.Node, 0, len(s.Values))
		for _, v := range s.Values {
			if v = p.unwrap(v); v != nil {
				out = append(out, v)
			}
		}
		return out
	}
	p.errorf(n, "%s: want a list", what)
	return nil
}

func (p *walker) str(n ast.Node, what string) string {
	switch v := p.unwrap(n).(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		return v.Value.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return v.GetToken().Value
	case nil, *ast.NullNode:
		p.errorf(n, "%s: want a value", what)
		return ""
	}
	p.errorf(n, "%s: want a string", what)
	return ""
}

func (p *walker) num(n ast.Node, what string) float64 {
	switch v := p.unwrap(n).(type) {
	case *ast.IntegerNode:
		f, err := strconv.ParseFloat(strings.ReplaceAll(v.GetToken().Value, "_", ""), 64)
		if err == nil {
			return f
		}
	case *ast.FloatNode:
		return v.Value
	}
	p.errorf(n, "%s: want a number", what)
	return 0
}
