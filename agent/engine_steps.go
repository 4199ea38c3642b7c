package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/tools"
)

// classifySchema is the answer of steps 1 and 2.
func classifySchema(scenarios []string) json.RawMessage {
	enum, _ := json.Marshal(scenarios)
	return json.RawMessage(`{"type":"object","properties":{` +
		`"scenario":{"type":"string","enum":` + string(enum) + `},` +
		`"intents":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"object","properties":{` +
		`"action":{"type":"string","maxLength":40},` +
		`"object":{"type":"string","maxLength":60},` +
		`"constraints":{"type":"array","maxItems":4,"items":{"type":"string","maxLength":60}}},` +
		`"required":["action","object","constraints"],"additionalProperties":false}}},` +
		`"required":["scenario","intents"],"additionalProperties":false}`)
}

// parseClassification reads the answer of steps 1 and 2 strictly.
func parseClassification(content string, scenarios []string) (string, []Intent, error) {
	var ans struct {
		Scenario string `json:"scenario"`
		Intents  []struct {
			Action      string   `json:"action"`
			Object      string   `json:"object"`
			Constraints []string `json:"constraints"`
		} `json:"intents"`
	}
	if err := strictJSON(content, &ans); err != nil {
		return "", nil, err
	}
	if !slices.Contains(scenarios, ans.Scenario) {
		return "", nil, fmt.Errorf("scenario %q is not one of %s", ans.Scenario, strings.Join(scenarios, ", "))
	}
	var out []Intent
	for _, in := range ans.Intents {
		i := Intent{Action: clip(in.Action, 40), Object: clip(in.Object, 60)}
		for _, c := range in.Constraints {
			if c = clip(c, 60); c != "" && len(i.Constraints) < 4 {
				i.Constraints = append(i.Constraints, c)
			}
		}
		if i.Action != "" || i.Object != "" {
			out = append(out, i)
		}
		if len(out) == 3 {
			break
		}
	}
	if len(out) == 0 {
		return "", nil, errors.New("no intent with an action or an object")
	}
	return ans.Scenario, out, nil
}

func clip(s string, n int) string { return truncateText(strings.TrimSpace(s), n) }

// strictJSON decodes one JSON document and nothing else: an empty answer,
// trailing text or a document of the wrong shape is an error.
func strictJSON(content string, v any) error {
	content, err := jsonText(content)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(strings.NewReader(content))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("wrong shape: %v", err)
	}
	return nil
}

// jsonText trims an answer and rejects one that is empty or not JSON.
func jsonText(content string) (string, error) {
	content = strings.TrimSpace(content)
	if content == "" || content == "null" {
		return "", errors.New("empty answer")
	}
	if !json.Valid([]byte(content)) {
		return "", fmt.Errorf("not JSON: %q", truncateText(content, 80))
	}
	return content, nil
}

// answerParams checks a parameter answer as the registry will: valid JSON,
// an object, the tool's schema with defaults filled.
func (e *Engine) answerParams(tool, content string) (json.RawMessage, error) {
	content, err := jsonText(content)
	if err != nil {
		return nil, err
	}
	if content[0] != '{' {
		return nil, errors.New("parameters must be a JSON object")
	}
	return e.reg.Validate(tool, json.RawMessage(content))
}

// hasProperties reports whether a parameter schema has any parameter.
func hasProperties(schema json.RawMessage) bool {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	return json.Unmarshal(schema, &doc) == nil && len(doc.Properties) > 0
}

// params is step 5: one structured call whose format is the tool's
// schema, strict validation, one retry with the error, then refusal.
func (e *Engine) params(ctx context.Context, tr *Trace, r request, fr frame, spec tools.Spec, pr *prompts) (json.RawMessage, error) {
	if !hasProperties(spec.Params) {
		tr.note(spec.Name + " takes no parameters: no LLM call")
		return e.reg.Validate(spec.Name, json.RawMessage(`{}`))
	}
	guide := pr.guideFor([]string{spec.Name})
	if guide != "" {
		tr.note("guide included: " + guide)
	}
	req := llm.Request{Purpose: "params", System: pr.system, Schema: spec.Params, MaxTokens: e.cfg.MaxTokens,
		Messages: []llm.Message{{Role: "user", Content: paramsPrompt(fr, r, tr.Intents, spec, pr.guideText(guide))}}}
	return askValid(ctx, e, tr, req, 512, "parameters for "+spec.Name,
		"That answer is invalid: %s. Answer again with parameters that satisfy the schema.",
		"no valid parameters for "+spec.Name,
		func(content string) (json.RawMessage, error) { return e.answerParams(spec.Name, content) })
}

// askValid makes a structured call and checks the answer with check. A
// rejected answer is asked again once, with the reason (again is a format
// with one %s); then it fails with "<fail>: <reason>". Errors that asking
// again cannot fix (ctx ended, LLM unavailable, a deadline) are returned as
// they are.
func askValid[T any](ctx context.Context, e *Engine, tr *Trace, req llm.Request, echo int, what, again, fail string, check func(string) (T, error)) (T, error) {
	var zero T
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		resp, err := e.generate(ctx, tr, req)
		if ctx.Err() != nil || errors.Is(err, llm.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) {
			return zero, err // asking again would not help
		}
		if err == nil {
			var v T
			if v, err = check(resp.Content); err == nil {
				return v, nil
			}
		}
		last = err
		tr.note(fmt.Sprintf("%s rejected: %v", what, err))
		req.Messages = append(slices.Clip(req.Messages),
			llm.Message{Role: "assistant", Content: truncateText(resp.Content, echo)},
			llm.Message{Role: "user", Content: fmt.Sprintf(again, truncateText(err.Error(), 400))})
	}
	return zero, fmt.Errorf("%s: %v", fail, last)
}

// plan asks the planner for a DAG over the candidates.
func (e *Engine) plan(ctx context.Context, tr *Trace, r request, fr frame, cands []scoredTool, pr *prompts) ([]Step, error) {
	specs := make([]tools.Spec, len(cands))
	names := make([]string, len(cands))
	for i, c := range cands {
		specs[i], names[i] = c.spec, c.spec.Name
	}
	guide := pr.guideFor(names)
	if guide != "" {
		tr.note("guide included: " + guide)
	}
	req := llm.Request{Purpose: "plan", System: pr.system, Schema: planSchema(specs, e.cfg.MaxSteps), MaxTokens: 2 * e.cfg.MaxTokens,
		Messages: []llm.Message{{Role: "user", Content: planPrompt(fr, r, tr.Intents, specs, pr.guideText(guide))}}}
	return askValid(ctx, e, tr, req, 1024, "plan",
		"That plan is invalid: %s. Answer again with a plan that uses only the listed tools with parameters that satisfy their schemas.",
		"no valid plan",
		func(content string) ([]Step, error) { return e.parsePlan(content, names, r) })
}
