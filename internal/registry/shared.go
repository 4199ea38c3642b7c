package registry

import "sync"

// Shared is a process-wide table of values made on first use by name: the
// sim board's buses and lines, which every sensor naming them must share.
type Shared[T any] struct {
	make func(name string) T
	mu   sync.Mutex
	m    map[string]T
}

// NewShared returns an empty table whose values make builds.
func NewShared[T any](make func(name string) T) *Shared[T] {
	return &Shared[T]{make: make, m: map[string]T{}}
}

// Get returns the value of name, making it on first use.
func (s *Shared[T]) Get(name string) T {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[name]
	if !ok {
		v = s.make(name)
		s.m[name] = v
	}
	return v
}
