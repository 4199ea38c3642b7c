package say

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/edgeagent/edgeagent/hooks"
)

// The spoken answer to a voice command: one short sentence per outcome,
// built from what happened, never from a template the LLM fills in (a
// reply must be true even when the model is wrong).

// maxReply bounds a spoken reply: a sentence, not a report.
const maxReply = 160

// reply is what to say after a voice command's cycle: err is the cycle's
// error (a refusal says why), results the tool calls made for it.
func reply(results []hooks.ActionResult, err error) string {
	var parts []string
	for _, r := range results {
		if r.Action.Tool == toolName {
			continue // the command was to say something: it has been said
		}
		what := words(r.Action.Tool)
		if r.Err != nil {
			parts = append(parts, fmt.Sprintf("%s failed: %s", what, firstClause(r.Err.Error())))
			continue
		}
		parts = append(parts, outcome(what, r.Action.Params, r.Result))
	}
	switch {
	case len(parts) > 0:
		return clip(strings.Join(parts, ". ") + ".")
	case err != nil:
		return clip("Sorry, I can't: " + firstClause(err.Error()) + ".")
	case len(results) > 0:
		return "" // only speech was asked for
	}
	return "Sorry, I don't know how to do that."
}

// outcome is the sentence for a successful call: what the tool said if it
// says something (a text, readings), else what was done.
func outcome(what string, params, result json.RawMessage) string {
	var res struct {
		Value any      `json:"value"`
		Notes []string `json:"notes"`
	}
	_ = json.Unmarshal(result, &res)
	switch v := res.Value.(type) {
	case string:
		if v != "" {
			return strings.TrimSuffix(v, ".")
		}
	case map[string]any:
		for _, k := range []string{"say", "answer", "text", "message", "summary"} {
			if s, ok := v[k].(string); ok && s != "" {
				return strings.TrimSuffix(s, ".")
			}
		}
	case []any:
		if s := readings(v); s != "" {
			return s
		}
	}
	s := "OK, " + what
	if p := paramWords(params); p != "" {
		s += " " + p
	}
	if len(res.Notes) > 0 {
		s += ", " + firstClause(res.Notes[0])
	}
	return s
}

// readings speaks up to three world-model observations ("env temperature
// is 22.4 degrees").
func readings(obs []any) string {
	var out []string
	for _, o := range obs {
		m, ok := o.(map[string]any)
		if !ok {
			return ""
		}
		src, _ := m["source"].(string)
		switch {
		case m["value"] != nil:
			v, _ := m["value"].(float64)
			unit, _ := m["unit"].(string)
			out = append(out, strings.TrimSpace(fmt.Sprintf("%s is %s %s", words(src), strconv.FormatFloat(v, 'f', -1, 64), unitWords(unit))))
		case m["text"] != nil:
			out = append(out, fmt.Sprintf("%s is %v", words(src), m["text"]))
		}
		if len(out) == 3 {
			break
		}
	}
	return strings.Join(out, ", ")
}

// words turns identifiers into speech: "headlight.set" → "headlight set".
func words(id string) string {
	return strings.NewReplacer(".", " ", "_", " ").Replace(id)
}

var units = map[string]string{"°C": "degrees", "°F": "degrees Fahrenheit", "%": "percent", "%RH": "percent humidity",
	"hPa": "hectopascal", "lx": "lux", "m": "metres", "V": "volts", "A": "amps", "W": "watts", "ppm": "parts per million"}

func unitWords(u string) string {
	if w, ok := units[u]; ok {
		return w
	}
	return u
}

// paramWords speaks simple parameters: {"on":true} → "on"; {"angle":90} →
// "angle 90". Anything nested is left out.
func paramWords(params json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(params, &m) != nil || len(m) > 3 {
		return ""
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k].(type) {
		case bool:
			if v {
				out = append(out, words(k))
			} else if k == "on" {
				out = append(out, "off")
			} else {
				out = append(out, "not "+words(k))
			}
		case float64:
			if v != 0 { // a zero is a default more often than news (duration 0: no timer)
				out = append(out, words(k)+" "+strconv.FormatFloat(v, 'f', -1, 64))
			}
		case string:
			if len(v) <= 30 {
				out = append(out, words(k)+" "+v)
			}
		}
	}
	return strings.Join(out, ", ")
}

// firstClause keeps an error's first sentence, without the wrapping
// prefixes ("tool x: ...") a listener does not need.
func firstClause(s string) string {
	if i := strings.LastIndex(s, ": "); i >= 0 && i < len(s)-2 && len(s)-i > 12 {
		s = s[i+2:]
	}
	if i := strings.IndexAny(s, ".\n;("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

func clip(s string) string {
	if len(s) <= maxReply {
		return s
	}
	cut := strings.LastIndex(s[:maxReply], " ")
	if cut < maxReply/2 {
		cut = maxReply
	}
	return s[:cut] + "."
}
