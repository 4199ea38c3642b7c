// Package syncbuf is a byte buffer that several goroutines may write to at
// once: a log destination that a test hands to code with goroutines of its
// own (hooks run in parallel, a sensor's reconnect loop, a child process's
// output) and reads back while they may still be writing.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is an io.Writer safe for concurrent use. The zero value is empty
// and ready to use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
