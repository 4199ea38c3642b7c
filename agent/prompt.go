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
	"sync"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/tools"
)

// Prompts are ordered stable first, because Ollama (llama.cpp) reuses its
// KV cache for the longest common prefix of consecutive prompts: the system
// prompt is byte-identical from one call and one cycle to the next (role,
// rules, scenarios, inline skill guides: what the configuration fixes);
// each user message then opens with the scope's tool catalogue and the
// world summary (see frame), and ends with what is particular to the call.

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
	// Errors name the guide by its place (plugins.llm.skills[i]), not by
	// what the board says.
	for i, d := range docs {
		if !skillName.MatchString(d.Name) {
			return fmt.Errorf("skills[%d].name: want a lower-case name", i)
		}
		if _, dup := pr.docs[d.Name]; dup {
			return fmt.Errorf("skills[%d].name: given twice", i)
		}
		if strings.TrimSpace(d.Text) == "" {
			return fmt.Errorf("skills[%d]: the guide is empty", i)
		}
		for j, p := range d.Tools {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("skills[%d].tools[%d]: a bad pattern", i, j)
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
	b.WriteString(taskText)
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

// frame is what every call of one decision shares, stable first: the
// scope's tool catalogue (fixed while the tools are), then the world summary
// (it changes at most once per decision). It opens each user message, so
// the calls of a decision — and consecutive decisions while the world
// stands still — share the longest prefix Ollama can reuse from its KV
// cache. Everything that belongs to one call (its instruction, the
// request, intents, plugin context, the schemas it offers) comes after it.
type frame struct {
	head   string
	listed bool                 // the head lists the scope's tools
	extra  []hooks.Contribution // per-decision plugin context, in the tail
}

func newFrame(catalogue, world string, extra []hooks.Contribution) frame {
	var b strings.Builder
	b.Grow(len(catalogue) + len(world) + 16)
	b.WriteString(catalogue)
	b.WriteString("World now:\n")
	b.WriteString(strings.TrimSpace(world))
	b.WriteString("\n\n")
	return frame{head: b.String(), listed: catalogue != "", extra: extra}
}

// catalogue lists the skills of a scope, one line each, for the stable part
// of the prompt; "" when they do not fit in max bytes (then each call names
// only the candidates it offers, and the prompt does not grow with the
// number of tools).
func catalogue(scoped []*indexed, max int) string {
	if max <= 0 || len(scoped) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Tools:\n")
	for _, x := range scoped {
		if b.Len() > max {
			return ""
		}
		fmt.Fprintf(&b, "- %s: %s\n", x.spec.Name, firstSentence(x.spec.Description, 100))
	}
	if b.Len() > max {
		return ""
	}
	return b.String()
}

// firstSentence is the start of a description up to its first full stop,
// at most n bytes: enough to tell tools apart in the catalogue.
func firstSentence(desc string, n int) string {
	desc = strings.TrimSpace(desc)
	if i := strings.Index(desc, ". "); i > 0 {
		desc = desc[:i+1]
	}
	return truncateText(desc, n)
}

// catalogueCache keeps each scope's catalogue while the tool index stays
// the same generation (sync returns the same entries until a tool changes),
// so a decision does not rebuild it.
type catalogueCache struct {
	mu    sync.Mutex
	first *indexed // entries[0] of the generation the texts belong to
	n     int
	texts map[string]string // scope name ("" for main) → catalogue
}

func (c *catalogueCache) get(entries []*indexed, scope string, build func() string) string {
	var first *indexed
	if len(entries) > 0 {
		first = entries[0]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.texts == nil || c.first != first || c.n != len(entries) {
		c.first, c.n, c.texts = first, len(entries), map[string]string{}
	}
	text, ok := c.texts[scope]
	if !ok {
		text = build()
		c.texts[scope] = text
	}
	return text
}

func writeRequest(b *strings.Builder, r request) {
	fmt.Fprintf(b, "Request (%s): %s\n", r.kind, r.text)
	if r.note != "" {
		fmt.Fprintf(b, "Why: %s\n", r.note)
	}
}

func writeContext(b *strings.Builder, extra []hooks.Contribution) {
	if len(extra) > 0 {
		b.WriteString("Context:\n")
		for _, c := range extra {
			fmt.Fprintf(b, "- %s: %s\n", c.Plugin, strings.TrimSpace(c.Text))
		}
	}
}

func writeIntents(b *strings.Builder, intents []Intent) {
	for _, in := range intents {
		if s := strings.TrimSpace(in.String()); s != "" {
			fmt.Fprintf(b, "Intent: %s\n", s)
		}
	}
}

// taskText explains, once in the system prompt, the tasks a message ends
// with: the instructions are fixed text, so they belong to the cached prefix
// rather than to the tail of every call.
const taskText = "Each message ends with a task:\n" +
	"- classify: the scenario, and what should be done as intents: an action (a verb), the object it acts on, " +
	"constraints (amounts, directions, places, manner); one intent per separate action.\n" +
	"- params for the tool <name>: the parameters for that tool that carry out the request.\n" +
	"- plan: the tool calls that carry out the request, using only the tools offered with the task; each step has a short id " +
	"and lists in depends_on the ids it must wait for; no steps if nothing should be done.\n" +
	"- review: nothing was asked; does anything in the world need doing now? If so act=true and the task as one command; else act=false.\n"

// writeOffered describes a tool a call offers: its parameter schema, and
// its whole description when describe is set.
func writeOffered(b *strings.Builder, s tools.Spec, describe bool) {
	if !describe {
		fmt.Fprintf(b, "- %s parameters: %s\n", s.Name, compactJSON(s.Params))
		return
	}
	fmt.Fprintf(b, "- %s: %s Parameters: %s\n", s.Name, s.Description, compactJSON(s.Params))
}

func classifyPrompt(fr frame, r request) string {
	var b strings.Builder
	b.WriteString(fr.head)
	b.WriteString("Task: classify\n")
	writeRequest(&b, r)
	writeContext(&b, fr.extra)
	return b.String()
}

func paramsPrompt(fr frame, r request, intents []Intent, spec tools.Spec, guide string) string {
	var b strings.Builder
	b.WriteString(fr.head)
	fmt.Fprintf(&b, "Task: params for the tool %s (its schema follows)\n", spec.Name)
	writeRequest(&b, r)
	writeIntents(&b, intents)
	writeContext(&b, fr.extra)
	writeOffered(&b, spec, true) // one tool: its whole description helps most
	if guide != "" {
		fmt.Fprintf(&b, "Guide:\n%s\n", guide)
	}
	return b.String()
}

func planPrompt(fr frame, r request, intents []Intent, specs []tools.Spec, guide string) string {
	var b strings.Builder
	b.WriteString(fr.head)
	b.WriteString("Task: plan\n")
	writeRequest(&b, r)
	writeIntents(&b, intents)
	writeContext(&b, fr.extra)
	b.WriteString("Offered tools:\n")
	for _, s := range specs {
		writeOffered(&b, s, !fr.listed) // the catalogue already tells them apart
	}
	if guide != "" {
		fmt.Fprintf(&b, "Guide:\n%s\n", guide)
	}
	return b.String()
}

func reviewPrompt(fr frame) string {
	var b strings.Builder
	b.WriteString(fr.head)
	b.WriteString("Task: review\n")
	writeContext(&b, fr.extra)
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
	Clock   clock.Clock   // what Timeout is measured on (default the wall clock)
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
	cctx, cancel := clock.WithTimeout(ctx, clock.Or(c.Clock), timeout)
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
