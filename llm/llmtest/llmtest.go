// Package llmtest is a scripted stand-in for a language model, for tests and
// benchmarks of code that uses llm.LLM. It replaces the model only: callers
// still parse, validate and act on whatever it answers, so tests feed it
// good, bad and malformed answers alike. To exercise the Ollama adapter as
// well, use llm/local/ollamatest instead.
package llmtest

import (
	"context"
	"sync"

	"github.com/edgeagent/edgeagent/llm"
)

// Reply is a scripted answer.
type Reply struct {
	Content string
	Err     error
	Usage   llm.Usage
}

// LLM answers Generate calls from Script (or the queue given to Push) and
// Embed calls from EmbedFunc. The zero value answers every call with an
// error, so a test states what the model says. Safe for concurrent use.
type LLM struct {
	// Script answers a request; it is used when the queue is empty.
	Script func(req llm.Request) Reply
	// EmbedFunc answers Embed; nil means llm.ErrNoEmbedModel.
	EmbedFunc func(texts []string) ([][]float32, error)

	mu     sync.Mutex
	queue  []Reply
	calls  []llm.Request
	embeds int
}

// Push queues replies, answered in order before Script is consulted.
func (f *LLM) Push(r ...Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, r...)
}

// Generate records req and answers it.
func (f *LLM) Generate(ctx context.Context, req llm.Request) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, err
	}
	f.mu.Lock()
	f.calls = append(f.calls, req)
	var r Reply
	switch {
	case len(f.queue) > 0:
		r, f.queue = f.queue[0], f.queue[1:]
	case f.Script != nil:
		f.mu.Unlock()
		r = f.Script(req)
		f.mu.Lock()
	default:
		r = Reply{Err: llm.ErrUnavailable}
	}
	f.mu.Unlock()
	if r.Err != nil {
		return llm.Response{}, r.Err
	}
	return llm.Response{Content: r.Content, Usage: r.Usage}, nil
}

// Embed answers from EmbedFunc.
func (f *LLM) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.embeds++
	fn := f.EmbedFunc
	f.mu.Unlock()
	if fn == nil {
		return nil, llm.ErrNoEmbedModel
	}
	return fn(texts)
}

// Calls returns the Generate requests seen so far.
func (f *LLM) Calls() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.calls...)
}

// EmbedCalls counts Embed calls.
func (f *LLM) EmbedCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.embeds
}

// Reset forgets recorded calls and queued replies.
func (f *LLM) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls, f.queue, f.embeds = nil, nil, 0
}
