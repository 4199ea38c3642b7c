package sensors

import (
	"bytes"
	"sync"
)

// Tail keeps the last bytes written to it (2 KB unless Max says otherwise):
// give it to a helper command as its stderr, and when the command dies the
// end of what it printed says why. Safe for concurrent use.
type Tail struct {
	Max int

	mu sync.Mutex
	b  []byte
}

func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	limit := t.Max
	if limit <= 0 {
		limit = 2048
	}
	t.b = append(t.b, p...)
	if len(t.b) > limit {
		t.b = append(t.b[:0], t.b[len(t.b)-limit:]...)
	}
	return len(p), nil
}

// String returns what was kept; of a long tail only the last line, which
// usually is the reason.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.b
	if i := bytes.LastIndexByte(bytes.TrimRight(b, "\n"), '\n'); len(b) > 400 && i >= 0 {
		b = b[i+1:]
	}
	return string(b)
}
