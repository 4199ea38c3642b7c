package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Texts embedded in one call when recorded are answered in another
// grouping too (a replay's store starts empty); a recorded failure
// replays as that failure; texts never embedded are not answered.
func TestEmbeddingsAnswerAsRecorded(t *testing.T) {
	var e embeddings
	if err := e.load([]byte(`{"kind":"llm_embed","data":{"texts":["` + digest("a") + `","` + digest("b") + `"],"vectors":[[1,0],[0,1]]}}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.add(embedding{Texts: []string{digest("c")}, Error: "ollama embed: server error 500"}); err != nil {
		t.Fatal(err)
	}
	if vecs, _, ok := e.answer([]string{"b", "a"}); !ok || vecs[0][1] != 1 || vecs[1][0] != 1 {
		t.Fatalf("b, a: %v %v", vecs, ok)
	}
	if _, failed, ok := e.answer([]string{"c"}); ok || !strings.Contains(failed, "500") {
		t.Fatalf("c: %q %v, want the recorded failure", failed, ok)
	}
	if _, failed, ok := e.answer([]string{"a", "d"}); ok || failed != "" {
		t.Fatalf("a, d: %q %v, want not recorded", failed, ok)
	}
	for _, bad := range []string{`{"data":{"texts":["x"],"vectors":[]}}`, `{"data":"secret"}`, `nope`} {
		if err := e.load([]byte(bad)); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}
