package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/edgeagent/edgeagent/internal/strictjson"
)

var emptyObjectSchema = json.RawMessage(`{"type":"object","additionalProperties":false}`)

// schema is a compiled parameter schema plus the defaults to fill in.
type schema struct {
	compiled *jsonschema.Schema
	doc      map[string]any // the schema document, for default filling
}

func compileSchema(name string, raw json.RawMessage) (*schema, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = emptyObjectSchema
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema is not JSON: %w", name, err)
	}
	m, ok := doc.(map[string]any)
	if !ok || m["type"] != "object" {
		return nil, fmt.Errorf("tool %s: parameter schema must be an object schema", name)
	}
	c := jsonschema.NewCompiler()
	url := "mem://tools/" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s: %w", name, err)
	}
	compiled, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: schema does not compile: %w", name, err)
	}
	return &schema{compiled: compiled, doc: m}, nil
}

// check parses params, fills defaults and validates. It returns the
// canonical JSON to hand to the tool.
func (s *schema) check(params json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(params)) == 0 || string(bytes.TrimSpace(params)) == "null" {
		params = json.RawMessage(`{}`)
	}
	// Duplicate keys are refused whoever calls (MQTT, the LLM's answers,
	// the CLI): the schema validator would see only the last value.
	if err := strictjson.CheckKeys(params); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Msg: "parameters: " + err.Error()}
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, &Error{Code: CodeInvalidParams, Msg: "parameters are not valid JSON: " + err.Error()}
	}
	filled := fillDefaults(s.doc, inst)
	if err := s.compiled.Validate(inst); err != nil {
		return nil, validationError(err)
	}
	if !filled {
		return params, nil // valid as sent: no second encoding pass
	}
	out, err := json.Marshal(inst)
	if err != nil {
		return nil, &Error{Code: CodeInvalidParams, Msg: err.Error()}
	}
	return out, nil
}

// fillDefaults sets "default" values of absent object properties,
// recursively into nested objects that are present (or just created).
func fillDefaults(schema map[string]any, inst any) (filled bool) {
	obj, ok := inst.(map[string]any)
	if !ok {
		return false
	}
	props, _ := schema["properties"].(map[string]any)
	for name, ps := range props {
		sub, ok := ps.(map[string]any)
		if !ok {
			continue
		}
		if _, present := obj[name]; !present {
			if d, has := sub["default"]; has {
				obj[name] = cloneJSON(d)
				filled = true
			}
		}
		if v, present := obj[name]; present && fillDefaults(sub, v) {
			filled = true
		}
	}
	return filled
}

func cloneJSON(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = cloneJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, e := range t {
			s[i] = cloneJSON(e)
		}
		return s
	}
	return v
}

// validationError flattens the schema library's error tree into one message
// per failing JSON path (leaves only: the parents repeat their children).
func validationError(err error) error {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return &Error{Code: CodeInvalidParams, Msg: err.Error()}
	}
	var problems []string
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if len(u.Errors) == 0 && u.Error != nil {
			loc := u.InstanceLocation
			if loc == "" {
				loc = "/"
			}
			problems = append(problems, loc+": "+u.Error.String())
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.BasicOutput())
	sort.Strings(problems)
	problems = dedupe(problems)
	paths := make([]string, 0, len(problems))
	for _, p := range problems {
		paths = append(paths, p[:strings.Index(p, ": ")])
	}
	return &Error{Code: CodeInvalidParams, Msg: "parameters violate the schema: " + strings.Join(problems, "; "), Paths: dedupe(paths)}
}

func dedupe(s []string) []string {
	out := s[:0]
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}
