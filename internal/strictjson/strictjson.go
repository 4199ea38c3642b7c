// Package strictjson decodes JSON the way a robot should accept it from
// outside: an object with a key twice is an error, not "the last one
// wins". Two parsers that disagree on such a payload (a broker-side ACL
// proxy, a logger, Home Assistant, us) are a classic smuggling path:
// {"tool":"agent.status","tool":"estop.trigger"} must not reach a tool.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// CheckKeys reports the first key that appears twice in one object,
// at any depth. It does not otherwise validate beyond what walking the
// tokens needs; malformed JSON is left to the decoder that follows.
func CheckKeys(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers are not converted, only skipped
	type frame struct {
		keys  map[string]struct{}
		isObj bool
		key   bool // the next string token in this object is a key
	}
	var stack []frame
	for {
		t, err := dec.Token()
		if err != nil {
			return nil // EOF or malformed: not this check's business
		}
		switch v := t.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if len(stack) > 0 && stack[len(stack)-1].isObj {
					stack[len(stack)-1].key = true // the container was a value
				}
				if len(stack) == maxDepth {
					return fmt.Errorf("nested deeper than %d levels", maxDepth)
				}
				stack = append(stack, frame{isObj: v == '{', key: v == '{'})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return nil
				}
			}
			continue
		case string:
			if n := len(stack); n > 0 && stack[n-1].isObj && stack[n-1].key {
				f := &stack[n-1]
				if f.keys == nil {
					f.keys = map[string]struct{}{}
				}
				if _, dup := f.keys[v]; dup {
					return &DuplicateKeyError{Key: truncate(v), Offset: dec.InputOffset()}
				}
				f.keys[v] = struct{}{}
				f.key = false
				continue
			}
		}
		// A scalar value.
		if n := len(stack); n > 0 && stack[n-1].isObj {
			stack[n-1].key = true
		} else if n == 0 {
			return nil
		}
	}
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

// truncate keeps an error short whatever key a payload carries.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
