package wwtrain

import (
	"strings"
	"testing"
)

// A model whose validation recall in clean speech is low says so at the
// top of its report, with what to do; a good one does not.
func TestReportSaysWhenTheModelIsWeak(t *testing.T) {
	rep := func(clean float64) string {
		r := Report{Phrase: "hey robot", Validation: Validation{Recall: []RecallRow{
			{Condition: "pink 10 dB", N: 150, Recall: 0.2},
			{Condition: "clean", N: 150, Recall: clean},
		}}}
		return r.Markdown()
	}
	if md := rep(0.30); !strings.Contains(md, "A weak model") || !strings.Contains(md, "30.0 %") || !strings.Contains(md, "--seed") {
		t.Fatalf("a 30 %% model's report:\n%s", md)
	}
	if md := rep(0.94); strings.Contains(md, "weak") {
		t.Fatalf("a 94 %% model's report calls it weak:\n%s", md)
	}
}
