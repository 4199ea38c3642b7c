package wwtrain

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws one updating bar per stage on a terminal (carriage
// returns), at most five times a second.
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	label string
	last  time.Time
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
	if p.open && label != p.label {
		fmt.Fprintln(p.w)
	}
	p.label, p.last, p.open = label, time.Now(), true
	const width = 30
	k := width * i / max(1, n)
	fmt.Fprintf(p.w, "\r%-26s [%s%s] %d/%d %s", label, strings.Repeat("=", k), strings.Repeat(" ", width-k), i, n, extra)
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

func (p *progress) done(msg string) { p.stage(msg) }

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
