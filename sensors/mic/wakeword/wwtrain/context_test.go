package wwtrain

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The random-context negatives hold the phrase's tail after another word
// or its head before another, never the phrase, and never a word that
// makes the piece sound like the phrase: "hay robot" is "hey robot" to
// espeak-ng, so "hay" may not lead "robot".
func TestRandomContextHoldsAPieceButNotThePhrase(t *testing.T) {
	needSynths(t)
	syn, err := newSynth(filepath.Join(t.TempDir(), "cache"))
	if err != nil {
		t.Fatal(err)
	}
	leads, follows, err := contextWords(context.Background(), syn, "hey robot", trainAccents)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"hay", "hey"} {
		if slices.Contains(leads, w) {
			t.Errorf("%q may lead %q", w, "robot")
		}
	}
	if slices.Contains(follows, "robot") || !slices.Contains(leads, "the") || !slices.Contains(follows, "can") {
		t.Errorf("leads %d words, follows %d: %q/%q", len(leads), len(follows), leads[:5], follows[:5])
	}
	r := rand.New(rand.NewPCG(1, 2))
	var tails, heads int
	for range 2000 {
		s := " " + randomContext(r, "hey robot", leads, follows) + " "
		if strings.Contains(s, " hey robot ") {
			t.Fatalf("%q holds the phrase", s)
		}
		ws := strings.Fields(s)
		for i, w := range ws {
			if w == "robot" && i > 0 && slices.Contains(leads, ws[i-1]) {
				tails++
			}
			if w == "hey" && i+1 < len(ws) && slices.Contains(follows, ws[i+1]) {
				heads++
			}
		}
	}
	if tails < 800 || heads < 800 {
		t.Fatalf("of 2000: %d tails after a lead, %d heads before a follower", tails, heads)
	}
	if _, _, ok := contextPieces("jarvis"); ok {
		t.Fatal("a one-word phrase has context pieces: in any context it is the phrase")
	}
}
