package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/edgeagent/edgeagent/tools"
)

// The execution planner: when a request needs several tools, or no single
// tool scores high enough, the model answers with a plan — a DAG of steps
// (tool, params, depends_on) — under a JSON Schema that admits only the
// candidate tools, each with its own parameter schema. The answer is then
// checked as strictly as a single call: every tool offered, every params
// object valid for its tool, every permission granted, no unknown
// dependency, no cycle. Nothing runs before all of that holds.

// planSchema is the structured-output schema of a plan over specs.
func planSchema(specs []tools.Spec, maxSteps int) json.RawMessage {
	type obj = map[string]any
	ids := obj{"type": "string", "maxLength": 8}
	alts := make([]any, len(specs))
	for i, s := range specs {
		params := s.Params
		if len(bytes.TrimSpace(params)) == 0 || bytes.Contains(params, []byte(`"$ref"`)) {
			// $ref would point into the tool's own document, not ours; the
			// registry validates the params against the real schema anyway.
			params = json.RawMessage(`{"type":"object"}`)
		}
		alts[i] = obj{
			"type": "object",
			"properties": obj{
				"id":         ids,
				"tool":       obj{"type": "string", "enum": []string{s.Name}},
				"params":     params,
				"depends_on": obj{"type": "array", "maxItems": maxSteps, "items": ids},
			},
			"required":             []string{"id", "tool", "params", "depends_on"},
			"additionalProperties": false,
		}
	}
	doc := obj{
		"type":                 "object",
		"properties":           obj{"steps": obj{"type": "array", "maxItems": maxSteps, "items": obj{"anyOf": alts}}},
		"required":             []string{"steps"},
		"additionalProperties": false,
	}
	out, _ := json.Marshal(doc)
	return out
}

// parsePlan reads and checks a plan answer. offered are the tools the
// planner was shown.
func (e *Engine) parsePlan(content string, offered []string, r request) ([]Step, error) {
	var ans struct {
		Steps []struct {
			ID        string          `json:"id"`
			Tool      string          `json:"tool"`
			Params    json.RawMessage `json:"params"`
			DependsOn []string        `json:"depends_on"`
		} `json:"steps"`
	}
	if err := strictJSON(content, &ans); err != nil {
		return nil, err
	}
	if len(ans.Steps) > e.cfg.MaxSteps {
		return nil, fmt.Errorf("%d steps, at most %d allowed", len(ans.Steps), e.cfg.MaxSteps)
	}
	steps := make([]Step, 0, len(ans.Steps))
	for i, s := range ans.Steps {
		id := strings.TrimSpace(s.ID)
		if id == "" {
			id = strconv.Itoa(i + 1)
		}
		if !slices.Contains(offered, s.Tool) {
			return nil, fmt.Errorf("step %s: tool %q is not one of the tools offered (%s)", id, s.Tool, strings.Join(offered, ", "))
		}
		params, err := e.answerParams(s.Tool, string(s.Params))
		if err != nil {
			return nil, fmt.Errorf("step %s (%s): %v", id, s.Tool, err)
		}
		steps = append(steps, Step{ID: id, Tool: s.Tool, Params: params, DependsOn: s.DependsOn})
	}
	if err := CheckPlan(steps); err != nil {
		return nil, err
	}
	if err := e.permitSteps(r, steps); err != nil {
		return nil, err
	}
	return steps, nil
}
