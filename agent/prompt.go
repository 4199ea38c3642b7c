package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
)

// Prompts are built so that the system prompt is byte-identical from one
// call and one cycle to the next (Ollama then reuses its KV cache for it):
// it holds only what the configuration fixes — role, rules, scenarios,
// inline skill guides. Everything that changes goes in the user message,
// the world summary last.

// Bounds on what skill guides may add to prompts.
const (
	inlineGuideBytes   = 4096 // all inline guides together, in the system prompt
	onDemandGuideBytes = 1536 // one guide in a request
)

// SkillDoc is a markdown guide a plugin ships for its tools. Inline guides
// go into the system prompt of every call; the others are listed there with
// their one-line description, their full text is added to a request when
// one of their tools is offered, and the skills.read tool returns it.
type SkillDoc struct {
	Name        string   // [a-z][a-z0-9_]*
	Description string   // one line
	Text        string   // markdown
	Inline      bool     // always in the system prompt (keep it short)
	Tools       []string // tool names or patterns ("drive.*") the guide explains
}

// SkillProvider is implemented by plugins that ship skill guides.
type SkillProvider interface{ SkillDocs() []SkillDoc }

var skillName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// prompts is the immutable prompt state, swapped whole by SetSkills.
type prompts struct {
	system   string
	docs     map[string]SkillDoc
	onDemand []SkillDoc
}

// SetSkills replaces the skill guides and rebuilds the system prompt.
func (e *Engine) SetSkills(docs []SkillDoc) error {
	pr := &prompts{docs: map[string]SkillDoc{}}
	for _, d := range docs {
		if !skillName.MatchString(d.Name) {
			return fmt.Errorf("skill guide %q: want a lower-case name", d.Name)
		}
		if _, dup := pr.docs[d.Name]; dup {
			return fmt.Errorf("skill guide %q given twice", d.Name)
		}
		if strings.TrimSpace(d.Text) == "" {
			return fmt.Errorf("skill guide %q is empty", d.Name)
		}
		for _, p := range d.Tools {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("skill guide %q: bad tool pattern %q", d.Name, p)
			}
		}
		pr.docs[d.Name] = d
	}
	names := make([]string, 0, len(pr.docs))
	for n := range pr.docs {
		names = append(names, n)
	}
	sort.Strings(names)

	var b strings.Builder
	robot := "a robot"
	if e.cfg.Device != "" {
		robot = "the robot " + e.cfg.Device
	}
	fmt.Fprintf(&b, "You are the decision engine of %s. Each message says what the robot perceived or was asked, "+
		"and what its world looks like now. Answer with one JSON document that matches the schema you are given, and nothing else.\n", robot)
	b.WriteString("Rules:\n" +
		"- Use only the tools a message offers, with parameters that fit their schemas.\n" +
		"- Do what was asked or what the situation needs, nothing more; when nothing should be done, say so.\n" +
		"- Never invent tools, devices or readings; the world summary is what is known.\n")
	fmt.Fprintf(&b, "Scenarios: %s.\n", strings.Join(e.cfg.Scenarios, ", "))
	left := inlineGuideBytes
	for _, n := range names {
		d := pr.docs[n]
		if !d.Inline {
			pr.onDemand = append(pr.onDemand, d)
			continue
		}
		text := strings.TrimSpace(d.Text)
		if len(text) > left {
			e.log.Warn("inline skill guide cut to fit the prompt budget", "guide", n, "budget", inlineGuideBytes)
			text = truncateText(text, max(left, 0))
		}
		left -= len(text)
		fmt.Fprintf(&b, "\nGuide %s:\n%s\n", n, text)
	}
	if len(pr.onDemand) > 0 {
		b.WriteString("\nMore guides (given in a message when their tools are offered):\n")
		for _, d := range pr.onDemand {
			fmt.Fprintf(&b, "- %s: %s\n", d.Name, truncateText(strings.TrimSpace(d.Description), 120))
		}
	}
	pr.system = b.String()
	e.prompts.Store(pr)
	return nil
}

// SystemPrompt is the current system prompt.
func (e *Engine) SystemPrompt() string { return e.prompts.Load().system }

// guideFor names the first on-demand guide covering one of the tools.
func (pr *prompts) guideFor(names []string) string {
	for _, d := range pr.onDemand {
		for _, p := range d.Tools {
			for _, n := range names {
				if ok, _ := path.Match(p, n); ok {
					return d.Name
				}
			}
		}
	}
	return ""
}

func (pr *prompts) guideText(name string) string {
	if name == "" {
		return ""
	}
	return truncateText(strings.TrimSpace(pr.docs[name].Text), onDemandGuideBytes)
}

// SkillTool is skills.read, an internal tool returning a guide's full text.
func (e *Engine) SkillTool() tools.Tool {
	spec := tools.Spec{
		Name:        "skills.read",
		Description: "Read the full text of a skill guide: how to use a plugin's tools.",
		Internal:    true,
		Permission:  "read",
		Params:      json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"guide name"}},"required":["name"],"additionalProperties":false}`),
	}
	return tools.Typed(spec, func(_ context.Context, p struct {
		Name string `json:"name"`
	}) (tools.Result, error) {
		pr := e.prompts.Load()
		d, ok := pr.docs[p.Name]
		if !ok {
			names := make([]string, 0, len(pr.docs))
			for n := range pr.docs {
				names = append(names, n)
			}
			sort.Strings(names)
			return tools.Result{}, fmt.Errorf("no guide %q (guides: %s)", p.Name, strings.Join(names, ", "))
		}
		return tools.Result{Value: map[string]any{"name": d.Name, "description": d.Description, "text": d.Text, "tools": d.Tools}}, nil
	})
}

func writeRequest(b *strings.Builder, r request) {
	fmt.Fprintf(b, "Request (%s): %s\n", r.kind, r.text)
	if r.note != "" {
		fmt.Fprintf(b, "Why: %s\n", r.note)
	}
}

func writeTail(b *strings.Builder, extra []hooks.Contribution, world string) {
	if len(extra) > 0 {
		b.WriteString("Context:\n")
		for _, c := range extra {
			fmt.Fprintf(b, "- %s: %s\n", c.Plugin, strings.TrimSpace(c.Text))
		}
	}
	b.WriteString("World now:\n")
	b.WriteString(strings.TrimSpace(world))
	b.WriteString("\n")
}

func writeIntents(b *strings.Builder, intents []Intent) {
	for _, in := range intents {
		if s := strings.TrimSpace(in.String()); s != "" {
			fmt.Fprintf(b, "Intent: %s\n", s)
		}
	}
}

func classifyPrompt(r request, extra []hooks.Contribution, world string) string {
	var b strings.Builder
	b.WriteString("Classify the situation into one scenario, and say what should be done as intents: an action (a verb), " +
		"the object it acts on, and constraints (amounts, directions, places, manner). One intent per separate action.\n\n")
	writeRequest(&b, r)
	writeTail(&b, extra, world)
	return b.String()
}

func paramsPrompt(r request, intents []Intent, spec tools.Spec, guide string, extra []hooks.Contribution, world string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Give the parameters for the tool %s that carry out the request.\n", spec.Name)
	fmt.Fprintf(&b, "Tool %s: %s\nParameter schema: %s\n", spec.Name, spec.Description, compactJSON(spec.Params))
	if guide != "" {
		fmt.Fprintf(&b, "Guide:\n%s\n", guide)
	}
	b.WriteString("\n")
	writeRequest(&b, r)
	writeIntents(&b, intents)
	writeTail(&b, extra, world)
	return b.String()
}

func planPrompt(r request, intents []Intent, specs []tools.Spec, guide string, extra []hooks.Contribution, world string) string {
	var b strings.Builder
	b.WriteString("Plan the tool calls that carry out the request, using only these tools. Give each step a short id; " +
		"a step that must wait for another to succeed lists that id in depends_on; steps without dependencies run at the same time. " +
		"Give no steps if nothing should be done.\nTools:\n")
	for _, s := range specs {
		fmt.Fprintf(&b, "- %s: %s Parameters: %s\n", s.Name, s.Description, compactJSON(s.Params))
	}
	if guide != "" {
		fmt.Fprintf(&b, "Guide:\n%s\n", guide)
	}
	b.WriteString("\n")
	writeRequest(&b, r)
	writeIntents(&b, intents)
	writeTail(&b, extra, world)
	return b.String()
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// ContextSource is a plugin that adds text to the decision prompt from a
// source that may be down (a memory service, a weather feed …). Its
// before_plan hook asks Fetch under Timeout; an error, a timeout or empty
// text skip the contribution silently, so the decision goes on without it.
// The text is bounded by the plan's context budget.
type ContextSource struct {
	Name    string
	Timeout time.Duration // default 200ms: the decision should not wait long
	Fetch   func(ctx context.Context, perception string) (string, error)
	Log     *slog.Logger
}

// Info implements hooks.Plugin.
func (c *ContextSource) Info() hooks.Info {
	return hooks.Info{Name: c.Name, Description: "adds context to decision prompts"}
}

// BeforePlan implements hooks.BeforePlanner.
func (c *ContextSource) BeforePlan(ctx context.Context, p *hooks.Plan) error {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 200 * time.Millisecond
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, err := c.Fetch(cctx, p.Perception)
	if err == nil && cctx.Err() != nil {
		err = cctx.Err()
	}
	if err != nil || strings.TrimSpace(text) == "" {
		if err != nil && c.Log != nil {
			c.Log.Debug("context source skipped", "source", c.Name, "err", err)
		}
		return nil
	}
	p.Contribute(c.Name, strings.TrimSpace(text))
	return nil
}
