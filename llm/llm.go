// Package llm is the contract between the agent and a language model: one
// structured generation call (the answer must match a JSON Schema) and one
// embedding call. The agent sees a model only through LLM; llm/local adapts
// Ollama to it and llm/llmtest scripts it for tests.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "user" or "assistant"; the system prompt is Request.System
	Content string `json:"content"`
}

// Request is one generation call.
type Request struct {
	// Purpose names the call in traces and logs: "classify", "params",
	// "plan", "motive" …
	Purpose string
	// System is the system prompt. Keep it byte-identical between calls so
	// the server can reuse its KV cache for the prefix; put what changes
	// (the world summary) at the end of the last message.
	System   string
	Messages []Message
	// Schema is the JSON Schema the answer must match (Ollama's structured
	// output "format"). Empty asks for free text.
	Schema json.RawMessage
	// Images go with the last user message, for a multimodal model (JPEG
	// or PNG bytes; Ollama receives them base64-encoded).
	Images [][]byte
	// MaxTokens caps the answer (Ollama num_predict); 0 uses the adapter's
	// default. A small model under a grammar can otherwise ramble until the
	// deadline.
	MaxTokens int
}

// PromptBytes is the size of the text the model reads.
func (r Request) PromptBytes() int {
	n := len(r.System)
	for _, m := range r.Messages {
		n += len(m.Content)
	}
	return n
}

// Response is the answer to a Request.
type Response struct {
	Content string // the JSON text when Request.Schema was set
	Usage   Usage
}

// Usage is what one call cost, as the server reported it.
type Usage struct {
	Model        string        `json:"model,omitempty"`
	PromptTokens int           `json:"prompt_tokens"`
	EvalTokens   int           `json:"eval_tokens"`
	Load         time.Duration `json:"load_ns,omitempty"`        // loading the model (0 when it was loaded)
	PromptEval   time.Duration `json:"prompt_eval_ns,omitempty"` // reading the prompt
	Eval         time.Duration `json:"eval_ns,omitempty"`        // generating the answer
	Total        time.Duration `json:"total_ns,omitempty"`       // server side, all of the above
}

// LLM is a language model.
type LLM interface {
	// Generate answers one request. It honours ctx: cancelling it aborts
	// the request in flight. It fails fast with an error wrapping
	// ErrUnavailable while the model server is known to be down.
	Generate(ctx context.Context, req Request) (Response, error)
	// Embed returns one vector per text. It fails with an error wrapping
	// ErrNoEmbedModel when no embedding model is configured or present.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

var (
	// ErrUnavailable: the model server cannot be reached (or the model is
	// not there); callers fall back to what works without it.
	ErrUnavailable = errors.New("llm unavailable")
	// ErrNoEmbedModel: embeddings are not available; callers use a local
	// embedder instead.
	ErrNoEmbedModel = errors.New("no embedding model")
	// ErrTruncated: the answer hit the token cap before it was complete.
	ErrTruncated = errors.New("answer cut off at the token limit")
)
