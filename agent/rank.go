package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Steps 3 and 4 of the engine: which tools are similar enough to the
// intents (capability match), and how they score (evaluation).

// rank is steps 3 and 4: the candidates similar to the intents, scored,
// best first; it returns the best one the requester may use and all of
// those.
func (e *Engine) rank(ctx context.Context, tr *Trace, r request, ev *worldmodel.Event, entries, scoped []*indexed, intents []Intent) (scoredTool, []scoredTool, error) {
	cands, err := e.match(ctx, tr, entries, scoped, tr.Scenario, intents, r.text)
	tr.lap("match")
	if err != nil {
		return scoredTool{}, nil, err
	}
	ranked := e.evaluate(cands, r, ev)
	tr.lap("evaluate")
	var allowed []scoredTool
	for _, c := range ranked {
		tr.Candidates = append(tr.Candidates, c.Candidate)
		if c.Permission > 0 {
			allowed = append(allowed, c)
		}
	}
	if len(allowed) == 0 {
		return scoredTool{}, nil, fmt.Errorf("no permitted tool: the best match, %s, needs permission %q", ranked[0].spec.Name, ranked[0].spec.Permission)
	}
	best := allowed[0]
	tr.Confidence = best.Score
	for _, c := range ranked[1:] {
		tr.Alternatives = append(tr.Alternatives, c.spec.Name)
	}
	return best, allowed, nil
}

// scoredTool is a candidate with its spec.
type scoredTool struct {
	Candidate
	spec tools.Spec
}

// match is step 3: the candidates most similar to any intent.
// all is every indexed skill (their embeddings are computed together, once);
// scoped is what the planner of this request may use.
func (e *Engine) match(ctx context.Context, tr *Trace, all, scoped []*indexed, scenario string, intents []Intent, text string) ([]scoredTool, error) {
	pool := scoped
	if scenario != "" {
		var tagged, neutral []*indexed
		for _, x := range scoped {
			switch {
			case slices.Contains(x.spec.Scenarios, scenario):
				tagged = append(tagged, x)
			case len(x.spec.Scenarios) == 0:
				neutral = append(neutral, x)
			}
		}
		if len(tagged) > 0 {
			pool = append(tagged, neutral...)
		} else {
			tr.note("no tool is tagged " + scenario + ": all tools considered")
		}
	}
	if len(pool) == 0 {
		return nil, errors.New("no tools to choose from")
	}
	texts := make([]string, len(intents))
	for i, in := range intents {
		texts[i] = strings.TrimSpace(in.String())
		if texts[i] == "" {
			texts[i] = text
		}
	}
	queries := make([]query, len(intents))
	lex := e.index.lexicon()
	for i, t := range texts {
		queries[i].lex = lex.sparse(t)
	}
	tr.Embedder = "lexical"
	if e.cfg.EmbedModel != "" && e.cfg.Clock.Now().UnixNano() >= e.embedDown.Load() {
		calls, err := e.index.embedMissing(ctx, e.llm, all)
		tr.EmbedCalls += calls
		var vecs [][]float32
		if err == nil {
			tr.EmbedCalls++
			vecs, err = e.llm.Embed(ctx, texts)
			if err == nil {
				err = checkVectors(vecs, len(texts))
			}
		}
		switch {
		case ctx.Err() != nil:
			return nil, context.Cause(ctx)
		case err != nil:
			// Lexical matching is worse but always there; do not pay a
			// failing call on every decision.
			tr.note("model embeddings unavailable (" + err.Error() + "): lexical match")
			e.embedDown.Store(e.cfg.Clock.Now().Add(time.Minute).UnixNano())
		default:
			for i := range queries {
				queries[i].vec = vecs[i]
			}
		}
	}

	best := map[string]scoredTool{}
	sims := make([]float64, len(pool))
	for _, q := range queries {
		if e.index.similarities(pool, q, sims) {
			tr.Embedder = e.cfg.EmbedModel
		}
		order := make([]int, len(pool))
		for i := range order {
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return sims[order[a]] > sims[order[b]] })
		for _, i := range order[:min(e.cfg.TopK, len(order))] {
			if sims[i] < e.cfg.MinSimilarity {
				break
			}
			name := pool[i].spec.Name
			if old, ok := best[name]; !ok || sims[i] > old.Semantic {
				best[name] = scoredTool{Candidate: Candidate{Tool: name, Semantic: round3(sims[i])}, spec: pool[i].spec}
			}
		}
	}
	if len(best) == 0 {
		return nil, fmt.Errorf("no tool is similar enough to %q (threshold %.2f)", strings.Join(texts, "; "), e.cfg.MinSimilarity)
	}
	out := make([]scoredTool, 0, len(best))
	for _, c := range best {
		out = append(out, c)
	}
	return out, nil
}

// evaluate is step 4: the weighted score of each candidate, best first.
func (e *Engine) evaluate(cands []scoredTool, r request, ev *worldmodel.Event) []scoredTool {
	stats := e.reg.Stats()
	fresh := e.freshness()
	now := e.cfg.Clock.Now()
	w := e.cfg.Weights
	for i := range cands {
		c := &cands[i]
		c.History = 0.5 // an unused tool: neither proven nor failed
		if h, ok := stats[c.spec.Name]; ok {
			c.History = round3(h.SuccessRate())
		}
		if e.permitted(r, c.spec.Permission) {
			c.Permission = 1
		}
		c.Context = round3(contextScore(c.spec, r.text, ev, fresh, now))
		c.Score = round3(w.Semantic*c.Semantic + w.History*c.History + w.Permission*c.Permission + w.Context*c.Context)
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].Score != cands[j].Score {
			return cands[i].Score > cands[j].Score
		}
		return cands[i].spec.Name < cands[j].spec.Name
	})
	return cands
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }

// freshness is the time of the newest observation per source.
func (e *Engine) freshness() map[string]time.Time {
	if e.world == nil {
		return nil
	}
	latest := e.world.LatestAll()
	out := make(map[string]time.Time, len(latest))
	for _, o := range latest {
		out[o.Source] = o.Time
	}
	return out
}

// contextScore is how relevant the world state a tool touches is right
// now: 1 when the perception names it (the event's source, or a word of the
// request naming the tool's device or what it touches), else how fresh its
// newest observation is (1 within 10 s, falling to 0 at 5 min), 0 when
// there is none.
func contextScore(s tools.Spec, text string, ev *worldmodel.Event, fresh map[string]time.Time, now time.Time) float64 {
	touches := slices.Clone(s.Touches)
	if i := strings.LastIndex(s.Name, "."); i > 0 {
		touches = append(touches, s.Name[:i]) // the device itself
	}
	lower := " " + strings.Join(words(text), " ") + " "
	for _, t := range touches {
		if ev != nil && ev.Source != "" && strings.HasPrefix(ev.Source, t) {
			return 1
		}
		last := t[strings.LastIndex(t, ".")+1:] // "actuator.headlight" is named "headlight"
		if strings.Contains(lower, " "+strings.Join(words(last), " ")+" ") {
			return 1
		}
	}
	score := 0.0
	for _, t := range touches {
		for src, at := range fresh {
			if !strings.HasPrefix(src, t) {
				continue
			}
			age := now.Sub(at)
			var f float64
			switch {
			case age <= 10*time.Second:
				f = 1
			case age < 5*time.Minute:
				f = 1 - float64(age-10*time.Second)/float64(5*time.Minute-10*time.Second)
			}
			score = max(score, f)
		}
	}
	return score
}
