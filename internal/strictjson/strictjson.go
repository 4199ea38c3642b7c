// Package strictjson decodes JSON the way a robot should accept it from
// outside: an object with a key twice is an error, not "the last one
// wins". Two parsers that disagree on such a payload (a broker-side ACL
// proxy, a logger, Home Assistant, us) are a classic smuggling path:
// {"tool":"agent.status","tool":"estop.trigger"} must not reach a tool.
//
// "Twice" is as encoding/json sees keys when it fills a struct: after
// decoding escapes, with invalid UTF-8 replaced by U+FFFD, and ignoring
// case (it matches "Tool" and "TOOL" to the field Tool, and "paramſ" to
// Params). So {"tool":…,"Tool":…} is refused too: a proxy that reads
// "tool" and a decoder that keeps the last match must not disagree.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ErrDuplicateKey matches every duplicate-key error.
var ErrDuplicateKey = errors.New("duplicate key")

// DuplicateKeyError names the key and where its second occurrence ends;
// never the value, so an error never quotes more of the input than a key.
type DuplicateKeyError struct {
	Key    string
	Offset int64
}

func (e *DuplicateKeyError) Error() string {
	return fmt.Sprintf("duplicate key %q at byte %d", e.Key, e.Offset)
}

func (e *DuplicateKeyError) Is(target error) bool { return target == ErrDuplicateKey }

// maxDepth bounds nesting, so a hostile payload cannot make the check walk
// a deep stack of sets (encoding/json itself stops at 10000).
const maxDepth = 256

// CheckKeys reports the first key that appears twice in one object, at
// any depth. It only scans: malformed JSON is left to the decoder that
// follows (CheckKeys then says nothing or stops early), and a valid
// document costs no allocation beyond one small slice per nesting level
// (it runs on every command).
func CheckKeys(data []byte) error {
	sc := scanner{data: data}
	if err := sc.value(0); err != errStop {
		return err
	}
	return nil
}

type scanner struct {
	data []byte
	i    int
}

// manyKeys is where an object's keys move from a slice to a map.
const manyKeys = 16

// errStop ends a scan of malformed input quietly.
var errStop = errors.New("stop")

func (s *scanner) skipSpace() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) error {
	s.skipSpace()
	if s.i >= len(s.data) {
		return nil
	}
	switch s.data[s.i] {
	case '{':
		if depth == maxDepth {
			return fmt.Errorf("nested deeper than %d levels", maxDepth)
		}
		return s.object(depth + 1)
	case '[':
		if depth == maxDepth {
			return fmt.Errorf("nested deeper than %d levels", maxDepth)
		}
		return s.array(depth + 1)
	case '"':
		_, _, err := s.str()
		return err
	}
	// A literal or a number: up to the next delimiter.
	start := s.i
	for s.i < len(s.data) && !strings.ContainsRune(",]}: \t\n\r", rune(s.data[s.i])) {
		s.i++
	}
	if s.i == start {
		return errStop // a delimiter where a value should be
	}
	return nil
}

// str reads a string; raw is its content between the quotes and escaped
// says whether it holds escapes (then it must be decoded to compare).
func (s *scanner) str() (raw []byte, escaped bool, err error) {
	start := s.i + 1
	for j := start; j < len(s.data); j++ {
		switch s.data[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			s.i = j + 1
			return s.data[start:j], escaped, nil
		}
	}
	return nil, false, errStop
}

// members reads the members of an object or array, whose opening
// delimiter is at s.i, up to its closing one, calling member at the start
// of each.
func (s *scanner) members(closing byte, member func() error) error {
	s.i++ // { or [
	for {
		s.skipSpace()
		if s.i >= len(s.data) {
			return errStop
		}
		switch s.data[s.i] {
		case closing:
			s.i++
			return nil
		case ',':
			s.i++
			continue
		}
		if err := member(); err != nil {
			return err
		}
	}
}

func (s *scanner) object(depth int) error {
	var keys []string
	var many map[string]struct{} // past manyKeys, so a hostile object is not quadratic
	return s.members('}', func() error {
		if s.data[s.i] != '"' {
			return errStop
		}
		raw, escaped, err := s.str()
		if err != nil {
			return err
		}
		key := string(raw)
		if escaped || !utf8.Valid(raw) {
			if json.Unmarshal(s.data[s.i-len(raw)-2:s.i], &key) != nil {
				return errStop
			}
		}
		dup := false
		if many != nil {
			folded := fold(key)
			_, dup = many[folded]
			many[folded] = struct{}{}
		} else {
			// EqualFold is the equivalence encoding/json matches fields
			// with, and allocates nothing.
			dup = slices.ContainsFunc(keys, func(k string) bool { return strings.EqualFold(k, key) })
			keys = append(keys, key)
			if len(keys) > manyKeys {
				many = make(map[string]struct{}, 2*manyKeys)
				for _, k := range keys {
					many[fold(k)] = struct{}{}
				}
			}
		}
		if dup {
			return &DuplicateKeyError{Key: truncate(key), Offset: int64(s.i)}
		}
		s.skipSpace()
		if s.i >= len(s.data) || s.data[s.i] != ':' {
			return errStop
		}
		s.i++
		return s.value(depth)
	})
}

func (s *scanner) array(depth int) error {
	return s.members(']', func() error { return s.value(depth) })
}

// Unmarshal is json.Unmarshal that also refuses duplicate keys.
func Unmarshal(data []byte, v any) error {
	if err := CheckKeys(data); err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Decode decodes exactly one JSON value into v: duplicate keys, unknown
// fields and data after the value are errors.
func Decode(data []byte, v any) error {
	if err := CheckKeys(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON value")
	}
	return nil
}

// fold maps keys that strings.EqualFold takes for equal to one string:
// each rune to the smallest of its case-folding orbit. Only objects with
// many keys need it (a map instead of pairwise comparisons).
func fold(key string) string {
	return strings.Map(func(r rune) rune {
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				return next
			}
			r = next
		}
	}, key)
}

// truncate keeps an error short whatever key a payload carries.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
