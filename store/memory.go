package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// Memory is a Store that lives as long as the process. Values are kept as
// JSON, as Bolt keeps them, so a value read back is a copy and decoding
// behaves the same with either store.
type Memory struct {
	mu      sync.Mutex
	buckets map[string]map[string]json.RawMessage
	logs    map[string]*memLog
}

type memLog struct {
	next    uint64
	seqs    []uint64
	entries []json.RawMessage
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{buckets: map[string]map[string]json.RawMessage{}, logs: map[string]*memLog{}}
}

func (m *Memory) Put(bucket, key string, v any) error {
	return m.PutMany(bucket, map[string]any{key: v})
}

func (m *Memory) PutMany(bucket string, values map[string]any) error {
	return m.Update(bucket, values, nil)
}

func (m *Memory) Update(bucket string, put map[string]any, del []string) error {
	enc := make(map[string]json.RawMessage, len(put))
	for k, v := range put {
		data, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("store: encode %s/%s: %w", bucket, k, err)
		}
		enc[k] = data
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.buckets[bucket]
	if b == nil {
		b = map[string]json.RawMessage{}
		m.buckets[bucket] = b
	}
	for _, k := range del {
		delete(b, k)
	}
	for k, v := range enc {
		b[k] = v
	}
	return nil
}

func (m *Memory) Get(bucket, key string, v any) (bool, error) {
	m.mu.Lock()
	data, ok := m.buckets[bucket][key]
	m.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("store: decode %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

func (m *Memory) Delete(bucket, key string) error {
	m.mu.Lock()
	delete(m.buckets[bucket], key)
	m.mu.Unlock()
	return nil
}

// ForEach visits a snapshot, so fn may call back into the store.
func (m *Memory) ForEach(bucket string, fn func(key string, value json.RawMessage) error) error {
	m.mu.Lock()
	b := m.buckets[bucket]
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	vals := make([]json.RawMessage, len(keys))
	slices.Sort(keys)
	for i, k := range keys {
		vals[i] = b[k]
	}
	m.mu.Unlock()
	for i, k := range keys {
		if err := fn(k, vals[i]); err != nil {
			return err
		}
	}
	return nil
}

func (m *Memory) Append(bucket string, v any, keep int) (uint64, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("store: encode %s entry: %w", bucket, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[bucket]
	if l == nil {
		l = &memLog{}
		m.logs[bucket] = l
	}
	l.next++
	l.seqs = append(l.seqs, l.next)
	l.entries = append(l.entries, data)
	if keep > 0 && len(l.seqs) > keep {
		drop := len(l.seqs) - keep
		l.seqs = slices.Delete(l.seqs, 0, drop)
		l.entries = slices.Delete(l.entries, 0, drop)
	}
	return l.next, nil
}

func (m *Memory) Tail(bucket string, n int, fn func(seq uint64, value json.RawMessage) error) error {
	m.mu.Lock()
	var seqs []uint64
	var entries []json.RawMessage
	if l := m.logs[bucket]; l != nil && n > 0 {
		from := max(0, len(l.seqs)-n)
		seqs, entries = slices.Clone(l.seqs[from:]), slices.Clone(l.entries[from:])
	}
	m.mu.Unlock()
	for i, s := range seqs {
		if err := fn(s, entries[i]); err != nil {
			return err
		}
	}
	return nil
}

func (m *Memory) LogSize(bucket string) (entries int, bytes int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if l := m.logs[bucket]; l != nil {
		for _, e := range l.entries {
			bytes += int64(len(e))
		}
		entries = len(l.entries)
	}
	return entries, bytes, nil
}

// Evict holds the lock while it asks evict: evict must not call back into
// the store.
func (m *Memory) Evict(bucket string, evict func(seq uint64, value json.RawMessage) bool) (entries int, bytes int64, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[bucket]
	if l == nil {
		return 0, 0, nil
	}
	for entries < len(l.seqs) && evict(l.seqs[entries], l.entries[entries]) {
		bytes += int64(len(l.entries[entries]))
		entries++
	}
	l.seqs = slices.Delete(l.seqs, 0, entries)
	l.entries = slices.Delete(l.entries, 0, entries)
	return entries, bytes, nil
}

// Close is a no-op: there is nothing to flush.
func (m *Memory) Close() error { return nil }
