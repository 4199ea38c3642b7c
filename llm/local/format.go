package local

import (
	"encoding/json"
	"strings"
)

// Ollama turns a "format" JSON Schema into a sampling grammar, and its
// converter rejects some valid schemas with "invalid JSON schema in format"
// — notably a property that has only a description and no type (any JSON
// value). The adapter therefore sends a grammar-friendly copy: a subschema
// without any structural keyword becomes {} (any value), which the
// converter accepts and which constrains exactly as much. The caller still
// validates the answer against the real schema.

// structural keywords are the ones the grammar is built from.
var structural = []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "items", "prefixItems", "pattern"}

// grammarSchema returns the grammar-friendly copy of a schema; anything
// that is not a JSON object (e.g. the string "json") is returned as is.
func grammarSchema(raw json.RawMessage) json.RawMessage {
	s := strings.TrimSpace(string(raw))
	if s == "" || s[0] != '{' {
		return raw
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return raw
	}
	out, err := json.Marshal(simplify(doc))
	if err != nil {
		return raw
	}
	return out
}

func simplify(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	bare := true
	for _, k := range structural {
		if _, has := m[k]; has {
			bare = false
			break
		}
	}
	if bare {
		return map[string]any{}
	}
	out := make(map[string]any, len(m))
	for k, sub := range m {
		switch k {
		case "properties", "$defs", "definitions", "patternProperties":
			if props, ok := sub.(map[string]any); ok {
				p := make(map[string]any, len(props))
				for name, s := range props {
					p[name] = simplify(s)
				}
				sub = p
			}
		case "items", "additionalProperties", "not", "contains":
			sub = simplify(sub) // a schema (or a bool, kept)
		case "anyOf", "oneOf", "allOf", "prefixItems":
			if list, ok := sub.([]any); ok {
				l := make([]any, len(list))
				for i, s := range list {
					l[i] = simplify(s)
				}
				sub = l
			}
		}
		out[k] = sub
	}
	return out
}
