package tools

import "encoding/json"

// Store is where the registry keeps tool history and disabled tools across
// restarts (store.Bolt and store.Memory are ones). The registry holds both in
// memory as well; the store is only what survives it.
type Store interface {
	Put(bucket, key string, v any) error
	PutMany(bucket string, values map[string]any) error
	Delete(bucket, key string) error
	ForEach(bucket string, fn func(key string, value json.RawMessage) error) error
}

// unsaved is the Store of a registry given none: nothing outlives it.
type unsaved struct{}

func (unsaved) Put(string, string, any) error                             { return nil }
func (unsaved) PutMany(string, map[string]any) error                      { return nil }
func (unsaved) Delete(string, string) error                               { return nil }
func (unsaved) ForEach(string, func(string, json.RawMessage) error) error { return nil }
