package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Builtins returns the internal tools every agent has: world.query and
// tools.stats. agent.status comes from the agent package, which owns the loop.
func Builtins(r *Registry, w *worldmodel.Model) []Tool {
	return []Tool{worldQuery(r.clock, w), toolStats(r)}
}

type worldQueryParams struct {
	Source      string `json:"source"`
	Latest      bool   `json:"latest"`
	SinceSeq    uint64 `json:"since_seq"`
	Window      string `json:"window"`
	Events      bool   `json:"events"`
	MinPriority string `json:"min_priority"`
	Limit       int    `json:"limit"`
}

func worldQuery(c clock.Clock, w *worldmodel.Model) Tool {
	spec := Spec{
		Name:        "world.query",
		Description: "Query the world model: latest readings per sensor, readings of one source in a time window or since a sequence number, and recent events by priority.",
		Internal:    true,
		Permission:  "read",
		Params: json.RawMessage(`{
  "type": "object",
  "properties": {
    "source": {"type": "string", "description": "world-model source, e.g. env.temperature; empty for all sources"},
    "latest": {"type": "boolean", "default": false, "description": "only the latest observation per source"},
    "since_seq": {"type": "integer", "minimum": 0, "default": 0},
    "window": {"type": "string", "default": "", "description": "Go duration such as 30s: observations newer than now minus window"},
    "events": {"type": "boolean", "default": false, "description": "return events instead of observations"},
    "min_priority": {"type": "string", "enum": ["low", "normal", "high", "critical"], "default": "low"},
    "limit": {"type": "integer", "minimum": 1, "maximum": 1000, "default": 50}
  },
  "additionalProperties": false
}`),
	}
	return Typed(spec, func(ctx context.Context, p worldQueryParams) (Result, error) {
		if p.Events {
			prio, err := worldmodel.ParsePriority(p.MinPriority)
			if err != nil {
				return Result{}, err
			}
			return Result{Value: w.Events(p.SinceSeq, prio, p.Limit)}, nil
		}
		var obs []worldmodel.Observation
		switch {
		case p.Latest && p.Source != "":
			if o, ok := w.Latest(p.Source); ok {
				obs = append(obs, o)
			}
		case p.Latest:
			obs = w.LatestAll()
		case p.Window != "":
			d, err := time.ParseDuration(p.Window)
			if err != nil || d <= 0 {
				return Result{}, fmt.Errorf("window %q: want a positive Go duration such as 30s", p.Window)
			}
			now := c.Now()
			obs = w.Window(p.Source, now.Add(-d), now)
		default:
			obs = w.Since(p.Source, p.SinceSeq, 0)
		}
		if len(obs) > p.Limit {
			obs = obs[len(obs)-p.Limit:]
		}
		return Result{Value: describe(obs)}, nil
	})
}

// observationView keeps blobs out of replies: a JPEG does not belong in an
// LLM prompt or an MQTT reply to a query.
type observationView struct {
	Seq    uint64            `json:"seq"`
	Time   time.Time         `json:"time"`
	Source string            `json:"source"`
	Kind   string            `json:"kind"`
	Value  *float64          `json:"value,omitempty"`
	Unit   string            `json:"unit,omitempty"`
	Text   string            `json:"text,omitempty"`
	Blob   string            `json:"blob,omitempty"`
	Event  *worldmodel.Event `json:"event,omitempty"`
}

func describe(obs []worldmodel.Observation) []observationView {
	out := make([]observationView, len(obs))
	for i, o := range obs {
		v := observationView{Seq: o.Seq, Time: o.Time, Source: o.Source, Kind: o.Kind.String(), Unit: o.Unit, Text: o.Text, Event: o.Event}
		if o.Kind == worldmodel.Reading {
			val := o.Value
			v.Value = &val
		}
		if o.Blob != nil {
			v.Blob = fmt.Sprintf("%s, %d bytes", o.Blob.MIME, len(o.Blob.Data))
		}
		out[i] = v
	}
	return out
}

func toolStats(r *Registry) Tool {
	spec := Spec{
		Name:        "tools.stats",
		Description: "Call statistics per tool: calls, successes, failures, cancellations, success rate and mean latency.",
		Permission:  "read",
		Params:      json.RawMessage(`{"type":"object","properties":{"tool":{"type":"string","default":""}},"additionalProperties":false}`),
	}
	type stat struct {
		History
		SuccessRate float64 `json:"success_rate"`
		MeanLatency string  `json:"mean_latency"`
	}
	return Typed(spec, func(ctx context.Context, p struct {
		Tool string `json:"tool"`
	}) (Result, error) {
		out := map[string]stat{}
		for name, h := range r.Stats() {
			if p.Tool == "" || p.Tool == name {
				out[name] = stat{h, h.SuccessRate(), h.MeanLatency().String()}
			}
		}
		return Result{Value: out}, nil
	})
}

// Admin returns the administration tools of the registry itself:
// tools.list, tools.enable and tools.disable (remembered in the store).
// They need the admin permission, like every administration tool, so that
// MQTT, the CLI and the dashboard reach them through one permission model
// and one audit path.
func Admin(r *Registry) []Tool {
	toolParam := json.RawMessage(`{"type":"object","properties":{"tool":{"type":"string","minLength":1,"maxLength":128,"description":"a tool's name (plugin.func, or func when unambiguous)"}},"required":["tool"],"additionalProperties":false}`)
	type toolArgs struct {
		Tool string `json:"tool"`
	}
	setEnabled := func(on bool) func(context.Context, toolArgs) (Result, error) {
		return func(ctx context.Context, a toolArgs) (Result, error) {
			spec, err := r.Resolve(a.Tool)
			if err != nil {
				return Result{}, err
			}
			if !on && (spec.Name == "tools.enable" || spec.Name == "tools.disable") {
				return Result{}, &Error{Code: CodeRefused, Msg: spec.Name + " cannot be disabled: nothing could enable it again"}
			}
			if err := r.SetEnabled(spec.Name, on); err != nil {
				return Result{}, err
			}
			verb := "disabled"
			if on {
				verb = "enabled"
			}
			r.log.Info("tool "+verb, "tool", spec.Name, "by", CallerOf(ctx))
			return Result{Value: map[string]any{"tool": spec.Name, "enabled": on}}, nil
		}
	}
	type skill struct {
		Spec
		Enabled bool `json:"enabled"`
	}
	return []Tool{
		Func(Spec{Name: "tools.list", Description: "The skills (tools offered outside the agent) with their parameter schemas and whether each is enabled.",
			Permission: "admin", Params: json.RawMessage(`{"type":"object","additionalProperties":false}`)},
			func(context.Context, json.RawMessage) (Result, error) {
				out := []skill{}
				for _, s := range r.List() {
					if !s.Internal {
						out = append(out, skill{s, r.Enabled(s.Name)})
					}
				}
				return Result{Value: out}, nil
			}),
		Typed(Spec{Name: "tools.enable", Description: "Enable a tool again (remembered across restarts).", Permission: "admin", Params: toolParam}, setEnabled(true)),
		Typed(Spec{Name: "tools.disable", Description: "Disable a tool: calls to it are refused until it is enabled (remembered across restarts).", Permission: "admin", Params: toolParam}, setEnabled(false)),
	}
}

// OllamaTools renders specs in the function-calling format of Ollama's
// /api/chat "tools" field (the same shape OpenAI uses).
func OllamaTools(specs []Spec) []map[string]any {
	out := make([]map[string]any, 0, len(specs))
	for _, s := range specs {
		out = append(out, map[string]any{
			"type": "function",
			"function": map[string]any{
				"name":        s.Name,
				"description": s.Description,
				"parameters":  s.Params,
			},
		})
	}
	return out
}
