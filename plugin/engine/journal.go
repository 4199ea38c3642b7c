package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

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

// Embedding is the Data of an "llm_embed" record: an embedding call's
// texts, by digest (TextDigest), and the vectors the model gave them or its
// error. A replay answers the same texts with the same vectors, so it ranks
// tools as the run did.
type Embedding struct {
	Texts    []string    `json:"texts"`
	Vectors  [][]float32 `json:"vectors,omitempty"`
	Error    string      `json:"error,omitempty"`
	Duration float64     `json:"duration_ms"`
}

// TextDigest names an embedded text in an "llm_embed" record: its SHA-256
// in hex (the texts themselves are tool descriptions and intents the
// stream holds elsewhere).
func TextDigest(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// Embed journals the calls that reach the model server. One that fails
// with ErrNoEmbedModel is not journaled: the client answers it itself (no
// embedding model, or one found missing), and a replay's client does the
// same from the same state.
func (j journaled) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	start := j.clock.Now()
	vecs, err := j.LLM.Embed(ctx, texts)
	if errors.Is(err, llm.ErrNoEmbedModel) || len(texts) == 0 {
		return vecs, err
	}
	x := Embedding{Texts: make([]string, len(texts)), Vectors: vecs, Duration: float64(j.clock.Since(start).Microseconds()) / 1000}
	for i, t := range texts {
		x.Texts[i] = TextDigest(t)
	}
	if err != nil {
		x.Vectors, x.Error = nil, err.Error()
	}
	if data, merr := json.Marshal(x); merr == nil { // vectors from the client are finite floats
		j.world.Note(worldmodel.Record{Kind: "llm_embed", Source: j.source, Data: data})
	}
	return vecs, err
}
