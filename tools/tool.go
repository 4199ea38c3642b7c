// Package tools is the tool contract and the registry every caller goes
// through: MQTT commands, the LLM engine, reflexes and the CLI. The registry
// resolves names, checks permissions, validates parameters against each
// tool's JSON Schema (filling defaults), runs the before_act/after_act hooks
// around the call and keeps a persisted success history per tool.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
)

// Spec describes a tool to callers and to the LLM.
type Spec struct {
	// Name is qualified as "plugin.func" (e.g. "headlight.set").
	Name        string `json:"name"`
	Description string `json:"description"`
	// Params is the JSON Schema of the parameter object. Empty means "no
	// parameters" and is treated as {"type":"object","additionalProperties":false}.
	Params json.RawMessage `json:"parameters,omitempty"`
	// Internal tools are for the agent itself (world.query …); they are not
	// offered over MQTT or to Home Assistant.
	Internal bool `json:"internal,omitempty"`
	// Permission is what a caller must be granted: read, actuate, publish,
	// admin … (default "read").
	Permission string `json:"permission"`
	// Scenarios tag the situations the tool fits (security, navigation …);
	// the decision engine filters candidates by them.
	Scenarios []string `json:"scenarios,omitempty"`
	// Touches lists world-model source prefixes the tool acts on or reads, so
	// the engine can tell how fresh the state it depends on is.
	Touches []string `json:"touches,omitempty"`
	// Entity, when set, says the tool sets the state of a thing a home
	// automation hub can show (Home Assistant discovery): the producer knows
	// what it drives, so the transport need not guess from names. It is not
	// part of the tool's JSON description.
	Entity *Entity `json:"-"`
}

// Entity describes the thing a tool drives, for home-automation discovery.
type Entity struct {
	// Platform is the entity type: "switch" (Param is a boolean) or
	// "number" (Param is a number within Min–Max).
	Platform string
	// Name is the thing's name; its state is the world model's actuator
	// state of that name.
	Name string
	// Param is the tool parameter the entity's value is written to.
	Param          string
	Min, Max, Step float64
	Unit           string
}

// Result is what a tool returns. Value must be JSON-encodable. Notes tell the
// caller what was changed on the way (e.g. "degrees clamped from 200 to 180").
type Result struct {
	Value any      `json:"value,omitempty"`
	Notes []string `json:"notes,omitempty"`
}

// Tool is one callable capability. Invoke receives parameters that have
// already been validated against Spec().Params, with defaults filled in.
type Tool interface {
	Spec() Spec
	Invoke(ctx context.Context, params json.RawMessage) (Result, error)
}

// Func adapts a function to Tool.
func Func(spec Spec, fn func(ctx context.Context, params json.RawMessage) (Result, error)) Tool {
	return funcTool{spec, fn}
}

type funcTool struct {
	spec Spec
	fn   func(context.Context, json.RawMessage) (Result, error)
}

func (f funcTool) Spec() Spec { return f.spec }
func (f funcTool) Invoke(ctx context.Context, p json.RawMessage) (Result, error) {
	return f.fn(ctx, p)
}

// Typed adapts a function taking a decoded parameter struct. Decoding cannot
// fail on input the schema accepted unless the struct and schema disagree,
// which is a programming error reported as such.
func Typed[P any](spec Spec, fn func(ctx context.Context, p P) (Result, error)) Tool {
	return funcTool{spec, func(ctx context.Context, raw json.RawMessage) (Result, error) {
		var p P
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &p); err != nil {
				return Result{}, fmt.Errorf("%s: parameters do not match the Go type (schema/struct mismatch): %w", spec.Name, err)
			}
		}
		return fn(ctx, p)
	}}
}

// Provider is implemented by plugins that bring tools.
type Provider interface {
	Tools() []Tool
}

type callerKey struct{}

// CallerOf returns who is calling the running tool ("mqtt", "llm", "reflex",
// "cli" …). The registry sets it, so tools that keep an audit trail know
// whom they acted for without trusting their parameters.
func CallerOf(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

type viaKey struct{}

// ViaOf returns the mark of the fleet or group command the running tool
// serves, nil for a direct call: the actuators' audit keeps it beside the
// caller.
func ViaOf(ctx context.Context) *Via {
	v, _ := ctx.Value(viaKey{}).(*Via)
	return v
}
