// Package store is the durable state of one agent: tool history, disabled
// tools, the audit log, the e-stop latch, cached embeddings. Bolt keeps it
// across restarts: key-value buckets in one bbolt file, logs (the audit
// log) in append-only segment files in a directory next to it, read and
// written with plain file I/O so that a log of tens of megabytes is not
// mapped into the process and does not count in its RSS. Memory keeps it
// for the life of the process (tests, `--no-store`, a dry-run node), so
// callers never check for nil.
package store

import (
	"encoding/json"
	"errors"
)

// ErrLocked: another process (a running edgeagent) holds the store file.
var ErrLocked = errors.New("store is locked")

// Store is a bucketed key-value store of JSON values plus append-only logs
// with sequence numbers. Implementations are safe for concurrent use.
type Store interface {
	// Put stores v as JSON under bucket/key.
	Put(bucket, key string, v any) error
	// PutMany stores several values at once (one fsync for Bolt).
	PutMany(bucket string, values map[string]any) error
	// Update stores put and deletes del in one bucket atomically (one
	// fsync for Bolt), for write-coalescing callers that bound a window of
	// keys; a missing key in del is not an error.
	Update(bucket string, put map[string]any, del []string) error
	// Get decodes bucket/key into v and reports whether it existed.
	Get(bucket, key string, v any) (bool, error)
	// Delete removes bucket/key; a missing key is not an error.
	Delete(bucket, key string) error
	// ForEach calls fn with every key and raw JSON value of bucket, in key order.
	ForEach(bucket string, fn func(key string, value json.RawMessage) error) error
	// Append adds v to the log kept in bucket and returns its sequence
	// number; beyond keep entries (keep > 0) the oldest are deleted.
	Append(bucket string, v any, keep int) (uint64, error)
	// Tail calls fn with the last n entries of a log bucket, oldest first.
	Tail(bucket string, n int, fn func(seq uint64, value json.RawMessage) error) error
	// LogSize counts the entries of a log bucket and the bytes of their values.
	LogSize(bucket string) (entries int, bytes int64, err error)
	// Evict deletes the oldest entries of a log bucket for as long as
	// evict says so (it sees each entry, oldest first) and returns what
	// it deleted: retention by age or size decided by the caller.
	Evict(bucket string, evict func(seq uint64, value json.RawMessage) bool) (entries int, bytes int64, err error)
	Close() error
}

var (
	_ Store = (*Bolt)(nil)
	_ Store = (*Memory)(nil)
)
