// Package registry is the table of names that sensor kinds, actuator kinds
// and plugins register into from init, as Caddy modules and Telegraf inputs
// do: safe for concurrent use, a name taken twice a programming error.
package registry

import (
	"slices"
	"sync"
)

// Registry maps names to what registered them (a factory, a kind).
type Registry[T any] struct {
	what string
	mu   sync.RWMutex
	m    map[string]T
}

// New returns an empty registry; what (SensorKind …) prefixes its
// panics.
func New[T any](what string) *Registry[T] {
	return &Registry[T]{what: what, m: map[string]T{}}
}

// Register adds v under name. It panics when name is taken.
func (r *Registry[T]) Register(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(r.what + " registered twice: " + name)
	}
	r.m[name] = v
}

// Lookup returns what is registered under name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names are the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for name := range r.m {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}
