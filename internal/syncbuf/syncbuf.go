// Package syncbuf holds buffers that several goroutines may write to at
// once while a test reads them: a byte buffer, the log destination a test
// hands to code with goroutines of its own (hooks run in parallel, a
// sensor's reconnect loop, a child process's output), and a list of what
// such code did (calls made, failures reported).
package syncbuf

import (
	"bytes"
	"slices"
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

// Slice is a list safe for concurrent use. The zero value is empty and
// ready to use.
type Slice[T any] struct {
	mu sync.Mutex
	s  []T
}

// Append adds vs at the end.
func (l *Slice[T]) Append(vs ...T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.s = append(l.s, vs...)
}

// All returns a copy of the list.
func (l *Slice[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.s)
}
