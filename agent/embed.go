package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/edgeagent/edgeagent/tools"
)

// Embedder turns texts into vectors (llm.LLM is one).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// KV is the part of the store the embedding cache needs (*store.Store).
type KV interface {
	Get(bucket, key string, v any) (bool, error)
	Put(bucket, key string, v any) error
}

// EmbeddingBucket is where model embeddings of tool descriptions are kept,
// keyed by model and a hash of the text embedded, so a changed description
// is embedded again and an unchanged one never is.
const EmbeddingBucket = "llm_embeddings"

// lexDims is the width of the lexical embedder's hashed space.
const lexDims = 1024

// lexicon is the built-in embedder: a hashed bag of words and character
// trigrams weighted by IDF over the tool descriptions. Trigrams let
// "headlight" meet "light" and "moving" meet "move" without a stemmer.
type lexicon struct {
	idf    map[string]float32
	maxIDF float32
}

// terms calls fn with each weighted term of a text: its words and their
// character trigrams.
func terms(text string, fn func(term string, weight float32)) {
	for _, w := range words(text) {
		if stopWords[w] {
			continue
		}
		fn(w, 1)
		g := "<" + w + ">"
		if len(g) <= 4 {
			continue
		}
		for i := 0; i+3 <= len(g); i++ {
			fn("#"+g[i:i+3], 0.3)
		}
	}
}

// words splits lower-cased text into runs of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

var stopWords = map[string]bool{
	"a": true, "an": true, "the": true, "of": true, "to": true, "in": true, "on": false, "for": true,
	"and": true, "or": true, "is": true, "it": true, "its": true, "be": true, "by": true, "with": true,
	"this": true, "that": true, "at": true, "as": true, "from": true, "please": true, "are": true,
}

func newLexicon(docs []string) *lexicon {
	df := map[string]int{}
	for _, d := range docs {
		seen := map[string]bool{}
		terms(d, func(t string, _ float32) {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		})
	}
	n := float64(len(docs))
	l := &lexicon{idf: make(map[string]float32, len(df)), maxIDF: float32(math.Log(1 + n))}
	for t, c := range df {
		l.idf[t] = float32(math.Log(1 + n/float64(c)))
	}
	return l
}

// weight of a term: its IDF, or the highest IDF for a term no tool has.
func (l *lexicon) weight(t string) float32 {
	if w, ok := l.idf[t]; ok {
		return w
	}
	return l.maxIDF
}

func bucket(t string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(t))
	return int(h.Sum32() % lexDims)
}

// dense embeds a tool text.
func (l *lexicon) dense(text string) []float32 {
	v := make([]float32, lexDims)
	terms(text, func(t string, w float32) { v[bucket(t)] += w * l.weight(t) })
	normalize(v)
	return v
}

// sparse embeds a query: the few buckets it touches.
type sparse struct {
	idx []int
	val []float32
}

func (l *lexicon) sparse(text string) sparse {
	acc := map[int]float32{}
	terms(text, func(t string, w float32) { acc[bucket(t)] += w * l.weight(t) })
	s := sparse{idx: make([]int, 0, len(acc)), val: make([]float32, 0, len(acc))}
	for i := range acc {
		s.idx = append(s.idx, i)
	}
	sort.Ints(s.idx)
	var norm float64
	for _, i := range s.idx {
		norm += float64(acc[i] * acc[i])
	}
	inv := float32(0)
	if norm > 0 {
		inv = float32(1 / math.Sqrt(norm))
	}
	for _, i := range s.idx {
		s.val = append(s.val, acc[i]*inv)
	}
	return s
}

func (s sparse) dot(v []float32) float64 {
	var d float32
	for k, i := range s.idx {
		d += s.val[k] * v[i]
	}
	return float64(d)
}

func normalize(v []float32) {
	var norm float64
	for _, x := range v {
		norm += float64(x * x)
	}
	if norm == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
}

func cosine(a, b []float32) float64 {
	if len(a) != len(b) || len(a) == 0 {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i] * b[i])
		na += float64(a[i] * a[i])
		nb += float64(b[i] * b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// toolText is what is embedded for a tool: its name in words, its
// description and its parameter names.
func toolText(s tools.Spec) string {
	var b strings.Builder
	b.WriteString(strings.NewReplacer(".", " ", "_", " ").Replace(s.Name))
	b.WriteString(": ")
	b.WriteString(s.Description)
	var sch struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(s.Params, &sch) == nil && len(sch.Properties) > 0 {
		names := make([]string, 0, len(sch.Properties))
		for n := range sch.Properties {
			names = append(names, strings.ReplaceAll(n, "_", " "))
		}
		sort.Strings(names)
		b.WriteString(" Parameters: ")
		b.WriteString(strings.Join(names, ", "))
	}
	return b.String()
}

func textKey(model, text string) string {
	sum := sha256.Sum256([]byte(text))
	return model + "/" + hex.EncodeToString(sum[:16])
}

// indexed is one tool as the matcher sees it.
type indexed struct {
	spec tools.Spec
	text string
	lex  []float32 // lexical vector (always)
	vec  []float32 // model vector, once computed
}

// toolIndex keeps the tools' vectors in step with the registry: a tool
// whose description changed is embedded again, the others are not.
type toolIndex struct {
	kv    KV
	model string // embedding model naming the cached vectors; "" = lexical only

	embedding sync.Mutex // one embedding batch at a time: Warm and a decision must not both pay for it

	mu     sync.Mutex
	tools  []*indexed
	byName map[string]*indexed
	lex    *lexicon
	cache  map[string][]float32 // textKey -> model vector
}

func newToolIndex(kv KV, model string) *toolIndex {
	return &toolIndex{kv: kv, model: model, byName: map[string]*indexed{}, cache: map[string][]float32{}}
}

// sync brings the index up to date with specs (sorted by name) and returns
// the current entries, which are never modified afterwards except for their
// model vector (guarded by x.mu). Unchanged specs cost a comparison each;
// the lexicon is rebuilt only when a text changed.
func (x *toolIndex) sync(specs []tools.Spec) []*indexed {
	x.mu.Lock()
	defer x.mu.Unlock()
	same := len(specs) == len(x.tools) && x.lex != nil
	for i := 0; same && i < len(specs); i++ {
		same = sameSpec(x.tools[i].spec, specs[i])
	}
	if same {
		return x.tools
	}
	texts := make([]string, len(specs))
	textChanged := len(specs) != len(x.tools) || x.lex == nil
	for i, s := range specs {
		if old := x.byName[s.Name]; old != nil && old.spec.Description == s.Description && bytes.Equal(old.spec.Params, s.Params) {
			texts[i] = old.text
		} else {
			texts[i] = toolText(s)
			textChanged = true
		}
	}
	if textChanged {
		x.lex = newLexicon(texts)
	}
	entries := make([]*indexed, len(specs))
	byName := make(map[string]*indexed, len(specs))
	for i, s := range specs {
		e := &indexed{spec: s, text: texts[i]}
		if old := x.byName[s.Name]; old != nil && old.text == e.text && !textChanged {
			e.lex, e.vec = old.lex, old.vec
		} else {
			e.lex = x.lex.dense(texts[i])
			if x.model != "" {
				e.vec = x.cache[textKey(x.model, e.text)]
			}
		}
		entries[i], byName[s.Name] = e, e
	}
	x.tools, x.byName = entries, byName
	return entries
}

func sameSpec(a, b tools.Spec) bool {
	return a.Name == b.Name && a.Description == b.Description && bytes.Equal(a.Params, b.Params) &&
		a.Internal == b.Internal && a.Permission == b.Permission &&
		slices.Equal(a.Scenarios, b.Scenarios) && slices.Equal(a.Touches, b.Touches)
}

// similarities scores entries against a query: with model vectors when
// q.vec is set and every entry has one, else lexically. It reports which
// was used.
func (x *toolIndex) similarities(entries []*indexed, q query, out []float64) (model bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	model = q.vec != nil
	for _, e := range entries {
		if e.vec == nil || len(e.vec) != len(q.vec) {
			model = false
			break
		}
	}
	for i, e := range entries {
		if model {
			out[i] = cosine(q.vec, e.vec)
		} else {
			out[i] = q.lex.dot(e.lex)
		}
	}
	return model
}

// query is an intent embedded both ways.
type query struct {
	lex sparse
	vec []float32
}

func (x *toolIndex) lexicon() *lexicon {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.lex
}

// embedMissing gives model vectors to the entries that lack one: from the
// store when they were computed before, else in one batch call. It returns
// the number of embedding calls made.
func (x *toolIndex) embedMissing(ctx context.Context, emb Embedder, entries []*indexed) (int, error) {
	if x.model == "" {
		return 0, nil
	}
	x.embedding.Lock()
	defer x.embedding.Unlock()
	x.mu.Lock()
	var missing []*indexed
	for _, e := range entries {
		if e.vec != nil {
			continue
		}
		key := textKey(x.model, e.text)
		if v, ok := x.cache[key]; ok {
			e.vec = v
			continue
		}
		if x.kv != nil {
			var v []float32
			if ok, err := x.kv.Get(EmbeddingBucket, key, &v); err == nil && ok && len(v) > 0 {
				x.cache[key], e.vec = v, v
				continue
			}
		}
		missing = append(missing, e)
	}
	x.mu.Unlock()
	if len(missing) == 0 {
		return 0, nil
	}
	calls := 0
	const batch = 64
	for start := 0; start < len(missing); start += batch {
		part := missing[start:min(start+batch, len(missing))]
		texts := make([]string, len(part))
		for i, e := range part {
			texts[i] = e.text
		}
		calls++
		vecs, err := emb.Embed(ctx, texts)
		if err == nil {
			err = checkVectors(vecs, len(texts))
		}
		if err != nil {
			return calls, err
		}
		x.mu.Lock()
		for i, e := range part {
			key := textKey(x.model, e.text)
			x.cache[key], e.vec = vecs[i], vecs[i]
			if x.kv != nil {
				_ = x.kv.Put(EmbeddingBucket, key, vecs[i]) // a cache: losing it costs one call later
			}
		}
		x.mu.Unlock()
	}
	return calls, nil
}

// checkVectors rejects an embedding answer that does not hold one vector
// per text: indexing it would panic or pair a text with another's vector.
func checkVectors(vecs [][]float32, n int) error {
	if len(vecs) != n {
		return fmt.Errorf("embedding model returned %d vectors for %d texts", len(vecs), n)
	}
	return nil
}
