// Package engine is the decision-engine plugin: the five-step engine on a
// local Ollama ("llm", when llm.enabled) or, without a model, the same engine
// with the local matcher only ("matcher"), so plain commands and goals still
// work.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/llm/local"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

func init() {
	plugin.Register("llm", func(h plugin.Host) (hooks.Plugin, error) {
		if !h.Board().LLM.Enabled {
			return nil, hooks.Decline("llm.enabled is false: text commands get the local matcher only")
		}
		return newEnginePlugin(h, "llm", true)
	})
	plugin.Register("matcher", func(h plugin.Host) (hooks.Plugin, error) {
		if h.Board().LLM.Enabled {
			return nil, hooks.Decline("the llm plugin includes the local matcher")
		}
		return newEnginePlugin(h, "matcher", false)
	})
}

// Options are the settings under plugins.llm in the board file.
type Options struct {
	// Events is the lowest priority of events the engine thinks about
	// (low, normal, high; default high). Critical never reaches the LLM.
	Events string `yaml:"events"`
	// Review lets the motive ask the LLM, on a heartbeat after the world
	// changed (new events, component health), whether anything needs doing.
	Review bool `yaml:"review"`
	// GoalRefire: a goal still unmet this long after firing fires again.
	GoalRefire time.Duration `yaml:"goal_refire"`
	// MaxTokens caps each structured answer.
	MaxTokens int `yaml:"max_tokens"`
	// Features are scoped toolsets reached through agent.enter_<name>_mode.
	Features []FeatureOptions `yaml:"features"`
	// Skills are markdown guides for the LLM.
	Skills []SkillOptions `yaml:"skills"`
}

// FeatureOptions configure one scoped toolset.
type FeatureOptions struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Tools       []string `yaml:"tools"` // names or patterns: drive.*
	Permission  string   `yaml:"permission"`
}

// SkillOptions name one guide file.
type SkillOptions struct {
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	File        string   `yaml:"file"` // markdown, relative to the board file
	Inline      bool     `yaml:"inline"`
	Tools       []string `yaml:"tools"`
}

type enginePlugin struct {
	name   string
	h      plugin.Host
	client *local.Client // nil for the matcher
	engine *agent.Engine
	docs   []agent.SkillDoc // from the board file
	opts   Options          // for CheckToolNames

	workers plugin.Workers // the client's supervisor and the embedding warm-up
}

func newEnginePlugin(h plugin.Host, name string, withLLM bool) (*enginePlugin, error) {
	var o Options
	b := h.Board()
	if err := b.Plugins["llm"].Decode(&o); err != nil {
		return nil, err
	}
	lc := b.LLM
	p := &enginePlugin{name: name, h: h, opts: o}
	reg, log := h.Tools(), h.Log().With("plugin", name)
	cfg := agent.EngineConfig{
		Device: b.Device.ID, Scenarios: lc.Scenarios,
		Weights: agent.Weights{Semantic: lc.Weights.Semantic, History: lc.Weights.History, Permission: lc.Weights.Permission, Context: lc.Weights.Context},
		TopK:    lc.TopK, MinSimilarity: lc.MinSimilarity, PlanBelow: lc.PlanBelow, SummaryBytes: lc.SummaryBytes,
		Review: o.Review, GoalRefire: o.GoalRefire, MaxTokens: o.MaxTokens,
		Permitted: func(requester string, grants []string, perm string) bool {
			// A voice command comes from someone standing at the robot;
			// it gets what the LLM caller is granted.
			if requester == "voice" {
				requester = "llm"
			}
			return reg.Permitted(requester, grants, perm)
		},
		Log: log,
	}
	if o.Events != "" {
		prio, err := worldmodel.ParsePriority(o.Events)
		if err != nil {
			return nil, fmt.Errorf("plugins.llm.events: %w", err)
		}
		cfg.EventMin = prio
	}
	for _, g := range b.Agent.Goals {
		cfg.Goals = append(cfg.Goals, agent.Goal{Name: g.Name, Source: g.Source, Above: g.Above, Below: g.Below, Text: g.Text})
	}
	for _, f := range o.Features {
		cfg.Features = append(cfg.Features, agent.Feature{Name: f.Name, Description: f.Description, Tools: f.Tools, Permission: f.Permission})
	}
	for i, s := range o.Skills {
		file := s.File
		if !filepath.IsAbs(file) {
			file = filepath.Join(h.Dir(), file)
		}
		text, err := os.ReadFile(file)
		if err != nil {
			// Not err itself: it names the path.
			why := err
			if pe, ok := errors.AsType[*fs.PathError](err); ok {
				why = pe.Err
			}
			return nil, fmt.Errorf("plugins.llm.skills[%d].file: %v (relative paths are read from the board file's folder)", i, why)
		}
		p.docs = append(p.docs, agent.SkillDoc{Name: s.Name, Description: s.Description, Text: string(text), Inline: s.Inline, Tools: s.Tools})
	}
	cfg.Skills = p.docs

	var model llm.LLM
	if withLLM {
		c, err := local.New(local.Options{
			Host: lc.Host, Model: lc.Model, EmbedModel: lc.EmbedModel, NumCtx: lc.NumCtx, Seed: lc.Seed,
			Temperature: lc.Temperature, KeepAlive: lc.KeepAlive, Timeout: lc.Timeout, Log: log, Clock: h.Clock(),
		})
		if err != nil {
			return nil, err
		}
		p.client, model = c, journaled{LLM: c, world: h.World(), clock: h.Clock(), source: name}
		cfg.EmbedModel = lc.EmbedModel
	}
	cfg.Clock = h.Clock()
	e, err := agent.NewEngine(cfg, model, reg, h.World(), h.Store())
	if err != nil {
		return nil, fmt.Errorf("plugins.llm: %w", err)
	}
	p.engine = e
	return p, nil
}

func (p *enginePlugin) Info() hooks.Info {
	if p.client == nil {
		return hooks.Info{Name: p.name, Version: "1", Description: "local matcher and goals (no LLM)"}
	}
	return hooks.Info{Name: p.name, Version: "1", Description: "decision engine on " + p.client.Host()}
}

// CheckToolNames reports the features' and skills' tool names and
// patterns that no loaded tool answers to, at their keys.
func (p *enginePlugin) CheckToolNames(missing func(string) (string, bool)) error {
	block := p.h.Board().Plugins["llm"]
	var errs []error
	check := func(key string, names []string) {
		for j, t := range names {
			if msg, bad := missing(t); bad {
				errs = append(errs, block.Errorf(fmt.Sprintf("%s.tools[%d]", key, j), "%s", msg))
			}
		}
	}
	for i, f := range p.opts.Features {
		check(fmt.Sprintf("features[%d]", i), f.Tools)
	}
	for i, s := range p.opts.Skills {
		check(fmt.Sprintf("skills[%d]", i), s.Tools)
	}
	return errors.Join(errs...)
}

// Decider is the engine, asked after the explicit and reflex fast paths.
func (p *enginePlugin) Decider() agent.Decider { return p.engine }

// Engine is the decision engine (for `edgeagent decide --dry-run`).
func (p *enginePlugin) Engine() *agent.Engine { return p.engine }

// Tools are the feature entry tools and skills.read.
func (p *enginePlugin) Tools() []tools.Tool {
	return append(p.engine.EntryTools(), p.engine.SkillTool())
}

// Status is the llm component of agent.status.
func (p *enginePlugin) Status() any {
	if p.client == nil {
		return map[string]string{"state": "off", "reason": "llm.enabled is false: local matcher only"}
	}
	return p.client.Status()
}

// LLMChecked is closed once the LLM client knows whether its server
// answers (local.Client.Checked); without an LLM, at once.
func (p *enginePlugin) LLMChecked() <-chan struct{} {
	if p.client == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return p.client.Checked()
}

// OnAgentStart collects the skill guides of the other plugins and, with an
// LLM, starts supervising the server (check, preload, retry with backoff)
// and warms the embedding cache once the server answers.
func (p *enginePlugin) OnAgentStart(context.Context) error {
	docs := append([]agent.SkillDoc(nil), p.docs...)
	for _, pl := range p.h.Plugins() {
		if sp, ok := pl.(agent.SkillProvider); ok {
			docs = append(docs, sp.SkillDocs()...)
		}
	}
	if err := p.engine.SetSkills(docs); err != nil {
		return err
	}
	if p.client == nil {
		return nil
	}
	p.workers.Start()
	p.workers.Go(p.client.Run)
	p.workers.Go(p.warm)
	return nil
}

// warm computes tool embeddings once the server is available.
func (p *enginePlugin) warm(ctx context.Context) {
	t := p.h.Clock().NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for p.client.Status().State != local.StateAvailable {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
	}
	if err := p.engine.Warm(ctx); err != nil && ctx.Err() == nil {
		p.h.Log().Info("tool embeddings not computed; matching tools lexically", "plugin", p.name, "reason", err)
	}
}

func (p *enginePlugin) OnAgentStop(context.Context) error {
	p.workers.Stop()
	if p.client != nil {
		p.client.Close()
	}
	return nil
}
