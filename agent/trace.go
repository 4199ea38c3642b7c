package agent

import (
	"encoding/json"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/llm"
)

// Trace records how the engine reached a decision. It is the Trace of the
// Decisions the engine returns (refusals included), so the loop records it
// in the world model and hooks can publish it; it is JSON-encodable.
type Trace struct {
	Perception string   `json:"perception"`
	Requester  string   `json:"requester,omitempty"` // whose request (cli, mqtt, voice, motive)
	Path       string   `json:"path"`                // local | llm
	Motive     string   `json:"motive,omitempty"`    // the goal that fired, on a heartbeat
	Scope      string   `json:"scope,omitempty"`     // "main" or a feature's sub-planner
	Scenario   string   `json:"scenario,omitempty"`
	Intents    []Intent `json:"intents,omitempty"`
	// Embedder says how tools were matched: the embedding model, or
	// "lexical" (the built-in hashed bag of words).
	Embedder     string          `json:"embedder,omitempty"`
	Candidates   []Candidate     `json:"candidates,omitempty"`
	Planned      bool            `json:"planned,omitempty"` // the planner answered (several steps or low confidence)
	Tool         string          `json:"tool,omitempty"`
	Params       json.RawMessage `json:"params,omitempty"`
	Steps        []Step          `json:"steps,omitempty"`
	Confidence   float64         `json:"confidence"`
	Alternatives []string        `json:"alternatives,omitempty"`
	Refusal      string          `json:"refusal,omitempty"`
	Notes        []string        `json:"notes,omitempty"`

	LLMCalls     int         `json:"llm_calls"`
	EmbedCalls   int         `json:"embed_calls"`
	PromptBytes  int         `json:"prompt_bytes"`
	PromptTokens int         `json:"prompt_tokens"`
	EvalTokens   int         `json:"eval_tokens"`
	Calls        []CallTrace `json:"calls,omitempty"`
	Timings      []Timing    `json:"timings,omitempty"` // time per step, in order
	TotalMS      float64     `json:"total_ms"`

	clock clock.Clock
	start time.Time
	mark  time.Time
}

// Intent is what the request asks for (step 2).
type Intent struct {
	Action      string   `json:"action"`
	Object      string   `json:"object"`
	Constraints []string `json:"constraints,omitempty"`
	Text        string   `json:"text,omitempty"`
}

func (i Intent) String() string {
	s := i.Action + " " + i.Object
	for _, c := range i.Constraints {
		s += " " + c
	}
	return s
}

// Candidate is one tool considered in step 4, with its sub-scores (each
// 0–1) and the weighted total.
type Candidate struct {
	Tool       string  `json:"tool"`
	Score      float64 `json:"score"`
	Semantic   float64 `json:"semantic"`
	History    float64 `json:"history"`
	Permission float64 `json:"permission"`
	Context    float64 `json:"context"`
}

// CallTrace is one LLM call.
type CallTrace struct {
	Purpose      string  `json:"purpose"`
	PromptBytes  int     `json:"prompt_bytes"`
	PromptTokens int     `json:"prompt_tokens"`
	EvalTokens   int     `json:"eval_tokens"`
	LoadMS       float64 `json:"load_ms,omitempty"`
	MS           float64 `json:"ms"`
	Error        string  `json:"error,omitempty"`
}

// Timing is the time one step of the decision took.
type Timing struct {
	Step string  `json:"step"`
	MS   float64 `json:"ms"`
}

func newTrace(c clock.Clock, perception, requester string) *Trace {
	now := c.Now()
	return &Trace{Perception: perception, Requester: requester, clock: c, start: now, mark: now}
}

// lap closes the current step under name.
func (t *Trace) lap(name string) {
	now := t.clock.Now()
	t.Timings = append(t.Timings, Timing{Step: name, MS: ms(now.Sub(t.mark))})
	t.mark = now
}

func (t *Trace) finish() {
	t.TotalMS = ms(t.clock.Since(t.start))
}

func (t *Trace) note(s string) { t.Notes = append(t.Notes, s) }

// call records one LLM call.
func (t *Trace) call(req llm.Request, resp llm.Response, took time.Duration, err error) {
	c := CallTrace{Purpose: req.Purpose, PromptBytes: req.PromptBytes(), PromptTokens: resp.Usage.PromptTokens,
		EvalTokens: resp.Usage.EvalTokens, LoadMS: ms(resp.Usage.Load), MS: ms(took)}
	if err != nil {
		c.Error = err.Error()
	}
	t.Calls = append(t.Calls, c)
	t.LLMCalls++
	t.PromptBytes += c.PromptBytes
	t.PromptTokens += c.PromptTokens
	t.EvalTokens += c.EvalTokens
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
