package wakeword

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws one updating bar per stage on a terminal (carriage
// returns), at most five times a second, with the time the stage has
// left at its pace so far.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	last  time.Time
	start time.Time // of the current bar's stage
	open  bool
}

func newProgress(w io.Writer) *progress {
	if w == nil {
		w = io.Discard
	}
	return &progress{w: w}
}

func (p *progress) bar(label string, i, n int, extra string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if label == p.label && i < n && time.Since(p.last) < 200*time.Millisecond {
		return
	}
	if label != p.label {
		if p.open {
			fmt.Fprintln(p.w)
		}
		p.start = time.Now()
	}
	p.label, p.last, p.open = label, time.Now(), true
	const width = 30
	k := width * i / max(1, n)
	eta := ""
	if i > 0 && i < n {
		left := time.Since(p.start) * time.Duration(n-i) / time.Duration(i)
		eta = " ETA " + left.Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r%-22s [%s%s] %d/%d%s %s   ", label, strings.Repeat("=", k), strings.Repeat(" ", width-k), i, n, eta, extra)
}

func (p *progress) stage(msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open {
		fmt.Fprintln(p.w)
		p.open = false
	}
	p.label = ""
	fmt.Fprintln(p.w, msg)
}

// counter returns a tick function for n items of a stage.
func (p *progress) counter(label string, n int) func() {
	var mu sync.Mutex
	i := 0
	return func() {
		mu.Lock()
		i++
		k := i
		mu.Unlock()
		p.bar(label, k, n, "")
	}
}
