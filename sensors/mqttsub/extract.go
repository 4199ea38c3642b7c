package mqttsub

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/buger/jsonparser"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// Reading is one value taken from each message of a topic: the reading
// <sensor>.<name>. The payload goes through up to three steps, each
// optional: json picks a value out of a JSON document, regexp picks the
// first capture group (or the whole match) out of that, and on/off map
// words to 1 and 0. What remains is a number (× scale + offset), or text
// when text is set.
type Reading struct {
	Name   string   `yaml:"name"`
	JSON   string   `yaml:"json"`   // path: "temperature", "after.label", "sensors[0].t"
	Regexp string   `yaml:"regexp"` // e.g. "T=([-0-9.]+)"
	On     []string `yaml:"on"`     // words that read 1 (case-insensitive): ON, open, true …
	Off    []string `yaml:"off"`    // words that read 0
	Text   bool     `yaml:"text"`   // keep the value as text (no number conversion)
	Scale  *float64 `yaml:"scale"`  // default 1
	Offset float64  `yaml:"offset"`
	Unit   string   `yaml:"unit"`
}

// Match is one condition of an event rule: the value at json (or the whole
// payload) is present and, when set, equals one of equals
// (case-insensitive) and matches regexp.
type Match struct {
	JSON   string   `yaml:"json"`
	Equals []string `yaml:"equals"`
	Regexp string   `yaml:"regexp"`
}

// Rule raises an event for each message on which all its matches hold.
type Rule struct {
	Event    string            `yaml:"event"`    // event kind, e.g. person
	Match    []Match           `yaml:"match"`    // all must hold; none: every message
	Priority string            `yaml:"priority"` // default: the sensor's priority, else high
	Data     map[string]string `yaml:"data"`     // event data key -> JSON path, e.g. {camera: after.camera}
}

// errAbsent marks a value that is not in this message (a missing key or
// null): Zigbee2MQTT and Frigate send partial documents, so it is not a bad
// payload.
var errAbsent = errors.New("absent")

// errNoMatch: the regexp did not match.
var errNoMatch = errors.New("regexp does not match")

// value is where a value comes from: an optional JSON path, then an
// optional regexp.
type value struct {
	path []string // nil: the whole payload
	re   *regexp.Regexp
}

func compileValue(path, re string) (value, error) {
	var v value
	if path != "" {
		p, err := splitPath(path)
		if err != nil {
			return v, err
		}
		v.path = p
	}
	if re != "" {
		r, err := regexp.Compile(re)
		if err != nil {
			return v, errors.New("regexp: not a valid regular expression (RE2 syntax)")
		}
		if r.NumSubexp() > 1 {
			return v, errors.New("regexp: at most one capture group (the value)")
		}
		v.re = r
	}
	return v, nil
}

// splitPath turns "a.b[2].c" into jsonparser's keys a, b, [2], c.
func splitPath(p string) ([]string, error) {
	var keys []string
	for part := range strings.SplitSeq(p, ".") {
		name, idx, _ := strings.Cut(part, "[")
		if name == "" && idx == "" {
			return nil, errors.New("json: an empty key")
		}
		if name != "" {
			keys = append(keys, name)
		}
		for idx != "" {
			n, rest, ok := strings.Cut(idx, "]")
			if _, err := strconv.ParseUint(n, 10, 32); !ok || err != nil {
				return nil, errors.New("json: a bad index (want [n])")
			}
			keys = append(keys, "["+n+"]")
			if rest == "" {
				break
			}
			if !strings.HasPrefix(rest, "[") {
				return nil, errors.New("json: want \".\" or \"[\" after ]")
			}
			idx = rest[1:]
		}
	}
	return keys, nil
}

// get returns the raw value (a JSON string without its quotes, still
// escaped) and its JSON type (jsonparser.Unknown for a non-JSON payload).
// It does not allocate.
func (v *value) get(payload []byte) ([]byte, jsonparser.ValueType, error) {
	raw, typ := payload, jsonparser.Unknown
	if v.path != nil {
		if !looksJSON(payload) {
			return nil, typ, errors.New("not a JSON document")
		}
		b, t, _, err := jsonparser.Get(payload, v.path...)
		switch {
		case errors.Is(err, jsonparser.KeyPathNotFoundError) || t == jsonparser.Null:
			return nil, t, errAbsent
		case err != nil:
			return nil, t, errors.New("malformed JSON")
		}
		raw, typ = b, t
	}
	if v.re != nil {
		m := v.re.FindSubmatchIndex(raw)
		if m == nil {
			return nil, typ, errNoMatch
		}
		if len(m) >= 4 && m[2] >= 0 {
			raw = raw[m[2]:m[3]]
		} else {
			raw = raw[m[0]:m[1]]
		}
		typ = jsonparser.String
	}
	return raw, typ, nil
}

// looksJSON is a cheap guard so binary payloads fail fast: a document is
// an object or an array.
func looksJSON(b []byte) bool {
	b = bytes.TrimLeft(b, " \t\r\n")
	return len(b) > 0 && (b[0] == '{' || b[0] == '[')
}

// reading is a compiled Reading.
type reading struct {
	source string // <sensor>.<name>
	value
	on, off       [][]byte
	text          bool
	scale, offset float64
	unit          string
}

func compileReading(sensor string, r Reading) (reading, error) {
	out := reading{source: sensor + "." + r.Name, text: r.Text, scale: 1, offset: r.Offset, unit: r.Unit}
	if !nameRE.MatchString(r.Name) {
		return out, errors.New("name: want [a-z][a-z0-9_]*")
	}
	v, err := compileValue(r.JSON, r.Regexp)
	if err != nil {
		return out, err
	}
	out.value = v
	if r.Scale != nil {
		out.scale = *r.Scale
	}
	if math.IsNaN(out.scale) || math.IsInf(out.scale, 0) || math.IsNaN(r.Offset) || math.IsInf(r.Offset, 0) {
		return out, errors.New("scale and offset must be finite")
	}
	if r.Text && (len(r.On) > 0 || len(r.Off) > 0 || r.Scale != nil || r.Offset != 0 || r.Unit != "") {
		return out, errors.New("text readings take no on/off, scale, offset or unit")
	}
	seen := map[string]bool{}
	for _, w := range append(append([]string(nil), r.On...), r.Off...) {
		k := strings.ToLower(strings.TrimSpace(w))
		if k == "" || seen[k] {
			return out, errors.New("on/off: a word is empty or listed twice")
		}
		seen[k] = true
	}
	out.on, out.off = words(r.On), words(r.Off)
	return out, nil
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func words(ws []string) [][]byte {
	out := make([][]byte, len(ws))
	for i, w := range ws {
		out[i] = []byte(strings.TrimSpace(w))
	}
	return out
}

// number extracts the reading's value as a number. It does not allocate.
func (r *reading) number(payload []byte) (float64, error) {
	raw, typ, err := r.get(payload)
	if err != nil {
		return 0, err
	}
	raw = bytes.TrimSpace(raw)
	if len(r.on) > 0 || len(r.off) > 0 {
		switch {
		case oneOf(raw, r.on):
			return 1, nil
		case oneOf(raw, r.off):
			return 0, nil
		}
		return 0, errors.New("neither an on nor an off word")
	}
	var v float64
	switch typ {
	case jsonparser.Boolean:
		if raw[0] == 't' {
			v = 1
		}
	case jsonparser.Object, jsonparser.Array:
		return 0, errors.New("a JSON object or array, not a number")
	default:
		f, err := jsonparser.ParseFloat(raw)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, errors.New("not a number")
		}
		v = f
	}
	return v*r.scale + r.offset, nil
}

// textValue extracts the reading's value as text (JSON strings unescaped).
func (r *reading) textValue(payload []byte) (string, error) {
	raw, typ, err := r.get(payload)
	if err != nil {
		return "", err
	}
	if typ == jsonparser.String && bytes.IndexByte(raw, '\\') >= 0 {
		s, err := jsonparser.ParseString(raw)
		if err != nil {
			return "", errors.New("malformed JSON string")
		}
		return s, nil
	}
	return string(raw), nil
}

func oneOf(b []byte, ws [][]byte) bool {
	for _, w := range ws {
		if bytes.EqualFold(b, w) {
			return true
		}
	}
	return false
}

// match is a compiled Match.
type match struct {
	value
	equals [][]byte
}

func (m *match) holds(payload []byte) (bool, error) {
	raw, _, err := m.get(payload)
	switch {
	case err == errAbsent || err == errNoMatch:
		return false, nil // not this event
	case err != nil:
		return false, err
	}
	return len(m.equals) == 0 || oneOf(bytes.TrimSpace(raw), m.equals), nil
}

// rule is a compiled Rule.
type rule struct {
	kind    string
	matches []match
	data    []dataField
	prio    worldmodel.Priority
}

type dataField struct {
	key  string
	path []string
}

func compileRule(r Rule) (rule, error) {
	out := rule{kind: r.Event}
	if !nameRE.MatchString(r.Event) {
		return out, errors.New("event: want [a-z][a-z0-9_]*")
	}
	for i, m := range r.Match {
		v, err := compileValue(m.JSON, m.Regexp)
		if err != nil {
			return out, fmt.Errorf("match[%d]: %w", i, err)
		}
		out.matches = append(out.matches, match{value: v, equals: words(m.Equals)})
	}
	for k, p := range r.Data {
		path, err := splitPath(p)
		if err != nil {
			return out, fmt.Errorf("data.%s: %w", k, err)
		}
		out.data = append(out.data, dataField{key: k, path: path})
	}
	return out, nil
}

// fires reports whether every match holds for payload.
func (r *rule) fires(payload []byte) (bool, error) {
	for i := range r.matches {
		ok, err := r.matches[i].holds(payload)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// eventData collects the rule's data fields from payload: numbers as
// float64, booleans as bool, the rest as text. Runs only when the rule
// fires, so it may allocate.
func (r *rule) eventData(payload []byte) map[string]any {
	d := make(map[string]any, len(r.data)+1)
	if !looksJSON(payload) {
		return d
	}
	for _, f := range r.data {
		b, t, _, err := jsonparser.Get(payload, f.path...)
		if err != nil {
			continue
		}
		switch t {
		case jsonparser.Number:
			if v, err := jsonparser.ParseFloat(b); err == nil {
				d[f.key] = v
			}
		case jsonparser.Boolean:
			d[f.key] = b[0] == 't'
		case jsonparser.String:
			if s, err := jsonparser.ParseString(b); err == nil {
				d[f.key] = s
			}
		case jsonparser.Null:
		default:
			d[f.key] = string(b)
		}
	}
	return d
}
