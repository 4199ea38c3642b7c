package wakeword

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	ww "github.com/edgeagent/edgeagent/sensors/mic/wakeword"
)

// Config is a training recipe. DefaultConfig is the shipped one; tests
// use tiny ones.
type Config struct {
	Phrase string `json:"phrase"`
	Seed   uint64 `json:"seed"`
	// InitSeed, when set, seeds the head's initial weights and the order
	// of its batches instead of Seed, which still draws the corpus: heads
	// trained on one corpus differ only by it.
	InitSeed uint64 `json:"init_seed,omitempty"`

	PosUtterances int `json:"pos_utterances"` // the phrase, espeak-ng training voices
	PosClips      int `json:"pos_clips"`      // rooms each is heard in
	NearReps      int `json:"near_reps"`      // utterances of each near miss
	// NearWeight is the loss weight of a near miss's windows (and of
	// the talk with pieces of the phrase) against other negatives' 1.
	NearWeight float64 `json:"near_weight"`
	// ContextUtterances are talk with a piece of the phrase in it.
	ContextUtterances int `json:"context_utterances"`
	SpeechStreams     int `json:"speech_streams"` // streams of other speech
	StreamUtts        int `json:"stream_utts"`    // utterances per stream
	NoiseClips        int `json:"noise_clips"`    // noise alone

	Hidden    []int   `json:"hidden"`  // hidden layer widths
	Dropout   float64 `json:"dropout"` // of hidden units while training
	Epochs    int     `json:"epochs"`  // passes over the negatives
	Batch     int     `json:"batch"`
	LR        float64 `json:"lr"`
	Decay     float64 `json:"decay"`
	PosWeight float64 `json:"pos_weight"` // positives' share of each batch

	// Hard-negative mining: MineStreams more streams (other speech and
	// near misses) are scored after training; their windows scoring at
	// least MineFloor join the negatives for MineEpochs more passes.
	MineStreams int     `json:"mine_streams"`
	MineFloor   float64 `json:"mine_floor"`
	MineEpochs  int     `json:"mine_epochs"`

	// Validation (espeak-ng speakers never trained on) chooses the
	// threshold: see chooseThreshold.
	ValPos     int     `json:"val_pos"`
	ValStreams int     `json:"val_streams"`
	ValNear    int     `json:"val_near_reps"`
	TargetFAH  float64 `json:"target_fa_per_hour"`
	MaxNear    float64 `json:"max_near"` // validation confusables allowed to fire

	Workers int `json:"-"`
}

// DefaultConfig is the recipe `edgeagent wakeword train` uses.
func DefaultConfig(phrase string) Config {
	return Config{Phrase: phrase, Seed: 1,
		PosUtterances: 1000, PosClips: 1, NearReps: 8, NearWeight: 3, ContextUtterances: 1000, SpeechStreams: 400, StreamUtts: 4, NoiseClips: 20,
		Hidden: []int{64}, Epochs: 8, Batch: 128, LR: 1e-3, Decay: 1e-4, PosWeight: 0.3,
		MineStreams: 100, MineFloor: 0.1, MineEpochs: 3,
		ValPos: 80, ValStreams: 30, ValNear: 1, TargetFAH: 0.5, MaxNear: 0.05,
		Workers: 2}
}

func (c *Config) check() error {
	p, err := normPhrase(c.Phrase)
	if err != nil {
		return err
	}
	c.Phrase = p
	if c.PosUtterances < 1 || c.PosClips < 1 || c.SpeechStreams < 1 || c.StreamUtts < 1 || c.Epochs < 1 ||
		c.Batch < 2 || c.LR <= 0 || c.PosWeight <= 0 || c.PosWeight >= 1 || c.ValPos < 1 || c.ValStreams < 1 ||
		c.Dropout < 0 || c.Dropout >= 1 || c.NearWeight <= 0 {
		return errors.New("recipe: counts, epochs, batch and rates must be positive (pos_weight below 1)")
	}
	if len(c.Hidden) > 4 || slices.ContainsFunc(c.Hidden, func(h int) bool { return h < 1 || h > 1024 }) {
		return errors.New("recipe: 0 to 4 hidden layers of 1 to 1024 units")
	}
	return nil
}

// Frontend makes the frontend the head is trained over: one per worker.
// ID names it in the head file and the cache.
type Frontend struct {
	ID  string
	New func() ww.Frontend
}

// Result is what Train made.
type Result struct {
	Head   *ww.Head
	Path   string
	Report Report
}

// Train synthesises the corpus, trains a head, chooses its threshold on
// the validation speakers and writes NAME.eawh and report.json under
// out (the caches under cacheDir). The same seed gives the same head.
func Train(ctx context.Context, cfg Config, fe Frontend, out, cacheDir string, log io.Writer) (*Result, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	began := time.Now()
	pr := newProgress(log)
	syn, err := newSynth(filepath.Join(cacheDir, "speech"))
	if err != nil {
		return nil, err
	}
	embDir := filepath.Join(cacheDir, "embeddings")
	if err := os.MkdirAll(embDir, 0o755); err != nil {
		return nil, err
	}
	c, err := buildCorpus(ctx, cfg, syn, pr)
	if err != nil {
		return nil, err
	}
	sets := c.render(cfg)
	emb := func(label string, xs [][]int16) ([]embedded, error) {
		return embedAll(ctx, fe, embDir, xs, cfg.Workers, pr.counter(label, len(xs)))
	}
	train, err := emb("embedding (training)", sets.train)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(cmp.Or(cfg.InitSeed, cfg.Seed), 7))
	net := newMLP(r, cfg.Hidden)
	f := newFitter(net, train, cfg.Workers)
	f.seed, f.drop = cmp.Or(cfg.InitSeed, cfg.Seed), float32(cfg.Dropout)
	pos, neg := sets.samples(train, float32(cfg.NearWeight))
	rep := Report{Config: cfg, Frontend: fe.ID, Positives: len(pos), Negatives: len(neg)}
	rep.Loss = append(rep.Loss, fit(ctx, f, r, cfg, pos, neg, cfg.Epochs, pr, "training")...)

	if cfg.MineStreams > 0 {
		mineClips, err := emb("embedding (mining)", sets.mine)
		if err != nil {
			return nil, err
		}
		base := len(f.clips)
		f.clips = append(f.clips, mineClips...)
		var pool []sample
		for i, em := range mineClips {
			for j := ww.WindowLen - 1; j < len(em.e); j++ {
				pool = append(pool, sample{c: int32(base + i), j: int16(j), w: 1})
			}
		}
		scores := f.scoreAll(ctx, pool)
		for i, s := range pool {
			if scores[i] >= cfg.MineFloor {
				neg = append(neg, s)
				rep.Mined++
			}
		}
		pr.stage(fmt.Sprintf("hard negatives: %d of %d mined windows scored ≥ %.2f", rep.Mined, len(pool), cfg.MineFloor))
		rep.Loss = append(rep.Loss, fit(ctx, f, r, cfg, pos, neg, cfg.MineEpochs, pr, "training (mined)")...)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	val, err := emb("embedding (validation)", sets.val)
	if err != nil {
		return nil, err
	}
	rep.Validation = validate(f, val, sets, cfg)
	rep.Threshold = rep.Validation.Threshold
	rep.Seconds = time.Since(began).Seconds()
	training, _ := json.Marshal(rep.summary())
	head, err := ww.NewHead(ww.HeadInfo{Name: Name(cfg.Phrase), Phrase: cfg.Phrase, Frontend: fe.ID,
		Threshold: rep.Threshold, Training: string(training)}, net.layers)
	if err != nil {
		return nil, err
	}
	res := &Result{Head: head, Path: filepath.Join(out, Name(cfg.Phrase)+".eawh"), Report: rep}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	fh, err := os.Create(res.Path)
	if err != nil {
		return nil, err
	}
	if err := ww.WriteHead(fh, head); err != nil {
		fh.Close()
		return nil, err
	}
	if err := fh.Close(); err != nil {
		return nil, err
	}
	js, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "report.json"), append(js, '\n'), 0o644); err != nil {
		return nil, err
	}
	pr.stage(fmt.Sprintf("trained in %s", time.Since(began).Round(time.Second)))
	return res, nil
}

// fit runs epochs passes over the negatives in balanced batches (a
// PosWeight share of positives, drawn round-robin from a shuffled order)
// and returns each epoch's mean loss.
func fit(ctx context.Context, f *fitter, r *rand.Rand, cfg Config, pos, neg []sample, epochs int, pr *progress, label string) []float64 {
	np := max(1, int(float64(cfg.Batch)*cfg.PosWeight))
	nn := max(1, cfg.Batch-np)
	steps := (len(neg) + nn - 1) / nn
	var curve []float64
	pi := 0
	pos = slices.Clone(pos)
	b := make([]sample, 0, cfg.Batch)
	for ep := range epochs {
		r.Shuffle(len(neg), func(i, j int) { neg[i], neg[j] = neg[j], neg[i] })
		var sum float64
		for s := range steps {
			if ctx.Err() != nil {
				return curve
			}
			b = append(b[:0], neg[s*nn:min(len(neg), (s+1)*nn)]...)
			for range np {
				if pi%len(pos) == 0 {
					r.Shuffle(len(pos), func(i, j int) { pos[i], pos[j] = pos[j], pos[i] })
				}
				b = append(b, pos[pi%len(pos)])
				pi++
			}
			sum += f.batch(ctx, b, cfg.LR, cfg.Decay)
			pr.bar(label, ep*steps+s+1, epochs*steps, fmt.Sprintf("loss %.4f", sum/float64(s+1)))
		}
		curve = append(curve, sum/float64(steps))
	}
	return curve
}

// embedAll embeds clips with one frontend per worker, into fixed slots.
func embedAll(ctx context.Context, fe Frontend, dir string, xs [][]int16, workers int, tick func()) ([]embedded, error) {
	out := make([]embedded, len(xs))
	fes := make(chan ww.Frontend, max(1, workers))
	for range max(1, workers) {
		fes <- fe.New()
	}
	err := parallel(ctx, len(xs), workers, func(i int) {
		f := <-fes
		out[i] = embedClip(f, fe.ID, dir, xs[i])
		fes <- f
		tick()
	})
	return out, err
}
