package engine

import (
	"context"
	"encoding/json"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/llm"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// journaled puts every exchange with the model into the world model's
// journal as an "llm" record — the full prompt and the raw answer, not just
// their sizes — so the dashboard shows it and the recorder keeps it (a
// replay answers from it).
type journaled struct {
	llm.LLM
	world  journal
	clock  clock.Clock
	source string
}

// journal is where the exchanges go: the world model's journal.
type journal interface {
	Note(worldmodel.Record) worldmodel.Record
}

// Exchange is the Data of an "llm" record.
type Exchange struct {
	Purpose   string          `json:"purpose"`
	System    string          `json:"system"`
	Messages  []llm.Message   `json:"messages"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	MaxTokens int             `json:"max_tokens,omitempty"`
	Answer    string          `json:"answer"`
	Error     string          `json:"error,omitempty"`
	Usage     llm.Usage       `json:"usage"`
	Duration  float64         `json:"duration_ms"`
}

func (j journaled) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	start := j.clock.Now()
	res, err := j.LLM.Generate(ctx, req)
	x := Exchange{Purpose: req.Purpose, System: req.System, Messages: req.Messages, Schema: req.Schema, MaxTokens: req.MaxTokens,
		Answer: res.Content, Usage: res.Usage, Duration: float64(j.clock.Since(start).Microseconds()) / 1000}
	if err != nil {
		x.Error = err.Error()
	}
	if data, merr := json.Marshal(x); merr == nil { // the schema came from our own tools and is valid JSON
		j.world.Note(worldmodel.Record{Kind: "llm", Source: j.source, Data: data})
	}
	return res, err
}
