package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/internal/embedinput"
)

// embedding is an "llm_embed" record (plugin/engine's Embedding): an
// embedding call's texts by SHA-256 and the vectors the model gave them,
// or its error.
type embedding struct {
	Texts   []string    `json:"texts"`
	Vectors [][]float32 `json:"vectors"`
	Error   string      `json:"error"`
}

// embeddings answers a replay's embedding calls from the recording: each
// text with the vector it was given when recorded, whichever call it came
// in (a replay's store starts empty, so it may batch texts the run had
// embedded apart), or a call with the error it ended with.
type embeddings struct {
	vectors map[string][]float32 // text digest -> vector
	failed  map[string]string    // the call's digests, joined -> its error
}

// embedTopic leads the channels of "llm_embed" records.
const embedTopic = "/llm_embed/"

// load adds a recorded "llm_embed" message.
func (e *embeddings) load(data []byte) error {
	var msg message
	var x embedding
	if json.Unmarshal(data, &msg) != nil || json.Unmarshal(msg.Data, &x) != nil {
		return fmt.Errorf("an llm_embed record without an embedding")
	}
	return e.add(x)
}

func (e *embeddings) add(x embedding) error {
	if x.Error == "" && len(x.Vectors) != len(x.Texts) {
		return fmt.Errorf("an llm_embed record with %d vectors for %d texts", len(x.Vectors), len(x.Texts))
	}
	if e.vectors == nil {
		e.vectors, e.failed = map[string][]float32{}, map[string]string{}
	}
	if x.Error != "" {
		e.failed[strings.Join(x.Texts, ",")] = x.Error
		return nil
	}
	for i, d := range x.Texts {
		e.vectors[d] = x.Vectors[i]
	}
	return nil
}

// answer is the recorded answer to texts: the vectors, or the recorded
// error (failed), or neither (ok false: the texts were not all embedded
// when recorded).
func (e *embeddings) answer(texts []string) (vecs [][]float32, failed string, ok bool) {
	digests := make([]string, len(texts))
	for i, t := range texts {
		sum := sha256.Sum256([]byte(t))
		digests[i] = hex.EncodeToString(sum[:])
	}
	if why, bad := e.failed[strings.Join(digests, ",")]; bad {
		return nil, why, false
	}
	vecs = make([][]float32, len(texts))
	for i, d := range digests {
		if vecs[i], ok = e.vectors[d]; !ok {
			return nil, "", false
		}
	}
	return vecs, "", true
}

// embed answers /api/embed as recorded. Texts never embedded when
// recorded are a missing model (404), which the client takes as "rank
// lexically", as a run whose embedding model is not pulled does.
func (o *ollama) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string `json:"model"`
		Input any    `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request"})
		return
	}
	texts, err := embedinput.Texts(req.Input)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad request"})
		return
	}
	vecs, failed, ok := o.embeds.answer(texts)
	switch {
	case failed != "":
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": failed})
	case !ok:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "replay: these texts were not embedded when recorded"})
	default:
		o.mu.Lock()
		o.vectors++
		o.mu.Unlock()
		writeJSON(w, http.StatusOK, map[string]any{"model": req.Model, "embeddings": vecs, "total_duration": time.Millisecond})
	}
}
