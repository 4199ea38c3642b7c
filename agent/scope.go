package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/edgeagent/edgeagent/tools"
)

// Scoped toolsets. A Feature groups tools (e.g. everything a patrol needs)
// behind an entry tool, agent.enter_<feature>_mode. The main planner sees
// the tools no feature claims plus the entry tools; calling an entry tool
// runs a sub-planner that sees only its feature's tools, decides with the
// same engine, runs its plan and returns a summary. The sub-planner runs
// under the calling step's context, so a preemption cancels it (its LLM
// call included) like any other step.

// Feature is one scoped toolset.
type Feature struct {
	Name        string   // [a-z][a-z0-9_]*
	Description string   // what the mode is for; the entry tool's description
	Tools       []string // tool names or patterns ("drive.*")
	// Permission of the entry tool (default "actuate": a mode acts on the
	// robot). Every step of the sub-plan is checked on its own as well.
	Permission string
}

var featureName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// EntryToolName is the entry tool of a feature.
func EntryToolName(feature string) string { return "agent.enter_" + feature + "_mode" }

func isEntryTool(name string) bool {
	return strings.HasPrefix(name, "agent.enter_") && strings.HasSuffix(name, "_mode")
}

func (f *Feature) claims(name string) bool {
	for _, p := range f.Tools {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (e *Engine) setFeatures(fs []Feature) error {
	seen := map[string]bool{}
	for i := range fs {
		f := &fs[i]
		if !featureName.MatchString(f.Name) {
			return fmt.Errorf("features[%d].name: want a lower-case name ([a-z][a-z0-9_]*)", i)
		}
		if seen[f.Name] {
			return fmt.Errorf("features[%d].name: given twice", i)
		}
		seen[f.Name] = true
		if strings.TrimSpace(f.Description) == "" {
			return fmt.Errorf("features[%d].description: needed (the main planner matches on it)", i)
		}
		if len(f.Tools) == 0 {
			return fmt.Errorf("features[%d].tools: none", i)
		}
		for j, p := range f.Tools {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("features[%d].tools[%d]: a bad pattern", i, j)
			}
		}
		if f.Permission == "" {
			f.Permission = "actuate"
		}
	}
	e.cfg.Features = fs
	return nil
}

// inScope: does the planner of scope (nil: main) see the tool?
func (e *Engine) inScope(scope *Feature, name string) bool {
	if scope != nil {
		return !isEntryTool(name) && scope.claims(name)
	}
	for i := range e.cfg.Features {
		if e.cfg.Features[i].claims(name) {
			return false
		}
	}
	return true
}

// ModeResult is what an entry tool returns.
type ModeResult struct {
	Mode  string       `json:"mode"`
	Task  string       `json:"task"`
	Trace *Trace       `json:"trace,omitempty"`
	Steps []StepResult `json:"steps,omitempty"`
}

// EntryTools are the entry tools of the configured features, to register
// with the registry.
func (e *Engine) EntryTools() []tools.Tool {
	out := make([]tools.Tool, 0, len(e.cfg.Features))
	for i := range e.cfg.Features {
		f := &e.cfg.Features[i]
		spec := tools.Spec{
			Name: EntryToolName(f.Name),
			Description: fmt.Sprintf("Enter %s mode: %s (hands the task to a planner that uses %s)",
				f.Name, strings.TrimSuffix(strings.TrimSpace(f.Description), "."), strings.Join(f.Tools, ", ")),
			Permission: f.Permission,
			Params: json.RawMessage(`{"type":"object","properties":{"task":{"type":"string","minLength":1,"maxLength":300,` +
				`"description":"what to do in this mode"}},"required":["task"],"additionalProperties":false}`),
		}
		out = append(out, tools.Typed(spec, func(ctx context.Context, p struct {
			Task string `json:"task"`
		}) (tools.Result, error) {
			return e.enter(ctx, f, p.Task)
		}))
	}
	return out
}

// enter runs the sub-planner of a feature on a task.
func (e *Engine) enter(ctx context.Context, f *Feature, task string) (tools.Result, error) {
	requester := tools.CallerOf(ctx) // whoever called the entry tool
	if requester == "" {
		requester = e.cfg.Caller
	}
	dec, err := e.decide(ctx, Perception{Trigger: "command"}, request{text: task, kind: "task in " + f.Name + " mode",
		requester: requester, scope: f, matcher: true})
	res := ModeResult{Mode: f.Name, Task: task}
	res.Trace = dec.Trace
	if err != nil {
		return tools.Result{}, fmt.Errorf("%s mode: %w", f.Name, err)
	}
	if len(dec.Steps) > 0 {
		res.Steps = runSteps(ctx, e.cfg.Clock, e.reg, dec, 0)
	}
	var failed []string
	for _, s := range res.Steps {
		if !s.OK() {
			failed = append(failed, s.Tool+": "+s.Error)
		}
	}
	if len(failed) > 0 {
		return tools.Result{}, fmt.Errorf("%s mode: %s", f.Name, strings.Join(failed, "; "))
	}
	return tools.Result{Value: res}, nil
}
