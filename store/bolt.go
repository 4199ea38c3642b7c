package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bolt is a Store in one bbolt file (pure Go, crash-safe), so that a board
// without cgo or a database server still keeps what it learned across
// restarts. Its logs are not in that file but in append-only segment files
// in a directory next to it (path.logs/<bucket>/, segments.go): bbolt reads
// through a memory map, and a log as large as the audit log (50 MB) kept
// there would count in the process's RSS. A bucket name is either a
// key-value bucket or a log; a log's name is also a directory's, so it is
// letters, digits, '.', '_' and '-'. All methods are safe for concurrent use.
type Bolt struct {
	db   *bolt.DB
	logs *logSet

	writes  atomic.Uint64         // write transactions, for trimming the map (trim.go)
	trimErr atomic.Pointer[error] // the first failed trim, reported by Close
}

// Open opens (creating if needed) the store at path. A store held by another
// running edgeagent is reported after a short wait instead of blocking forever.
func Open(path string) (*Bolt, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := bolt.Open(path, 0o640, &bolt.Options{Timeout: time.Second})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%w: %s is held by another process (is an edgeagent running with this board?)", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", path, err)
	}
	return &Bolt{db: db, logs: newLogSet(path+".logs", db)}, nil
}

// Close closes the logs' open files, then flushes and closes the bbolt file.
// A failed trim of the map (never seen: the advice is on bbolt's own map)
// is reported here, as a write that succeeded must not say it failed.
func (s *Bolt) Close() error {
	var trimErr error
	if p := s.trimErr.Load(); p != nil {
		trimErr = *p
	}
	return errors.Join(s.logs.close(), s.db.Close(), trimErr)
}

// Path is the file the store lives in.
func (s *Bolt) Path() string { return s.db.Path() }

// Put stores v as JSON under bucket/key.
func (s *Bolt) Put(bucket, key string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("store: encode %s/%s: %w", bucket, key, err)
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), data)
	})
}

// PutMany stores several values in one transaction (one fsync).
func (s *Bolt) PutMany(bucket string, values map[string]any) error {
	return s.Update(bucket, values, nil)
}

// Update stores put and deletes del in one transaction (one fsync).
func (s *Bolt) Update(bucket string, put map[string]any, del []string) error {
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucket))
		if err != nil {
			return err
		}
		for _, k := range del {
			if err := b.Delete([]byte(k)); err != nil {
				return err
			}
		}
		for k, v := range put {
			data, err := json.Marshal(v)
			if err != nil {
				return fmt.Errorf("store: encode %s/%s: %w", bucket, k, err)
			}
			if err := b.Put([]byte(k), data); err != nil {
				return err
			}
		}
		return nil
	})
}

// Get decodes bucket/key into v and reports whether it existed.
func (s *Bolt) Get(bucket, key string, v any) (bool, error) {
	var data []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			data = append(data, b.Get([]byte(key))...)
		}
		return nil
	})
	if err != nil || data == nil {
		return false, err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("store: decode %s/%s: %w", bucket, key, err)
	}
	return true, nil
}

// Delete removes bucket/key; a missing key is not an error.
func (s *Bolt) Delete(bucket, key string) error {
	return s.update(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte(bucket)); b != nil {
			return b.Delete([]byte(key))
		}
		return nil
	})
}

// ForEach calls fn with every key and raw JSON value of bucket, in key order.
func (s *Bolt) ForEach(bucket string, fn func(key string, value json.RawMessage) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error { return fn(string(k), v) })
	})
}

// Append adds v to the log kept in bucket and returns its sequence number,
// written and fsynced. When the log holds more than keep entries the
// oldest are evicted, so an append-only log (the audit trail) stays
// bounded on a small SD card.
func (s *Bolt) Append(bucket string, v any, keep int) (seq uint64, err error) {
	data, err := json.Marshal(v)
	if err != nil {
		return 0, fmt.Errorf("store: encode %s entry: %w", bucket, err)
	}
	err = s.logs.with(bucket, func(l *segLog) error {
		seq, err = l.append(data, keep)
		return err
	})
	return seq, err
}

// Tail calls fn with the last n entries of a log bucket, oldest first. The
// value is valid only during fn.
func (s *Bolt) Tail(bucket string, n int, fn func(seq uint64, value json.RawMessage) error) error {
	return s.logs.tail(bucket, n, fn)
}

// LogSize counts the entries of a log bucket and the bytes of their
// values, from counts kept in memory.
func (s *Bolt) LogSize(bucket string) (entries int, bytes int64, err error) {
	err = s.logs.with(bucket, func(l *segLog) error {
		entries, bytes = l.size()
		return nil
	})
	return entries, bytes, err
}

// Evict deletes the oldest entries of a log bucket while evict says so.
// The value is valid only during evict, which must not call back into the
// log.
func (s *Bolt) Evict(bucket string, evict func(seq uint64, value json.RawMessage) bool) (entries int, bytes int64, err error) {
	err = s.logs.with(bucket, func(l *segLog) error {
		entries, bytes, err = l.evict(evict)
		return err
	})
	return entries, bytes, err
}
