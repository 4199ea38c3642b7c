package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// labels are the expected wake-phrase counts of recordings, from a TSV of
// FILE<TAB>N lines (paths relative to the TSV; # starts a comment).
type labels struct {
	files []string
	want  map[string]int
}

func readLabels(path string) (labels, error) {
	f, err := os.Open(path)
	if err != nil {
		return labels{}, err
	}
	defer f.Close()
	l := labels{want: map[string]int{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, "\t")
		k, err := strconv.Atoi(strings.TrimSpace(parts[len(parts)-1]))
		if len(parts) != 2 || err != nil || k < 0 {
			return labels{}, fmt.Errorf("%s:%d: want FILE<TAB>N (N ≥ 0 wake phrases in FILE)", path, n)
		}
		p := parts[0]
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		if _, dup := l.want[p]; dup {
			return labels{}, fmt.Errorf("%s:%d: %s listed twice", path, n, parts[0])
		}
		l.files = append(l.files, p)
		l.want[p] = k
	}
	if err := sc.Err(); err != nil {
		return labels{}, err
	}
	if len(l.files) == 0 {
		return labels{}, fmt.Errorf("%s: no labelled files", path)
	}
	return l, nil
}

// labelTally adds up detections against labels. A file with N phrases
// counts min(detections, N) hits and any detections beyond N as false
// accepts; false accepts per hour are over the audio of every labelled
// file.
type labelTally struct {
	Phrases      int     `json:"phrases"`
	Hits         int     `json:"hits"`
	FalseAccepts int     `json:"false_accepts"`
	Hours        float64 `json:"hours"`
}

func (t *labelTally) add(want, got int, seconds float64) {
	t.Phrases += want
	t.Hits += min(want, got)
	t.FalseAccepts += max(0, got-want)
	t.Hours += seconds / 3600
}

func (t *labelTally) print(w io.Writer, asJSON bool) {
	recall, fa := 0.0, 0.0
	if t.Phrases > 0 {
		recall = float64(t.Hits) / float64(t.Phrases)
	}
	if t.Hours > 0 {
		fa = float64(t.FalseAccepts) / t.Hours
	}
	if asJSON {
		json.NewEncoder(w).Encode(struct {
			labelTally
			Recall    float64 `json:"recall"`
			FAPerHour float64 `json:"fa_per_hour"`
		}{*t, round3(recall), round3(fa)})
		return
	}
	fmt.Fprintf(w, "labelled: recall %d/%d = %.1f %%, %d false accept(s) in %.2f h = %.2f per hour\n",
		t.Hits, t.Phrases, 100*recall, t.FalseAccepts, t.Hours, fa)
}
