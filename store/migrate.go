package store

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"
)

// The previous layout kept each log in the bbolt bucket of its name, keyed
// by the 8-byte big-endian seq (seqKey), the bucket's sequence the last
// seq given. moveFromBolt moves such a bucket to the log's directory dir
// when the log is first used, in steps that a crash at any point neither
// loses nor duplicates an entry by: the segments are written into a
// temporary directory (one a new attempt starts over in), renamed into
// place, and only then is the bucket deleted. A directory in place and the
// bucket still there means the rename happened: the bucket only needs
// deleting.
func (s *logSet) moveFromBolt(bucket, dir string) error {
	var inBolt bool
	err := s.db.View(func(tx *bolt.Tx) error {
		inBolt = tx.Bucket([]byte(bucket)) != nil
		return nil
	})
	if err != nil || !inBolt {
		return err
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		tmp := dir + "~" // no log's: '~' is not allowed in a bucket name
		if err := os.RemoveAll(tmp); err != nil {
			return err
		}
		if err := s.copyFromBolt(bucket, tmp); err != nil {
			return err
		}
		if err := os.Rename(tmp, dir); err != nil {
			return err
		}
		if err := syncDir(s.dir); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket([]byte(bucket)) })
}

// copyFromBolt writes the entries of the bbolt bucket into segment files
// in the new directory dir, with their seqs, rolling as appends do. When
// the bucket's sequence is past its last entry (the newest were evicted),
// an empty segment named after the next seq carries it over.
func (s *logSet) copyFromBolt(bucket, dir string) error {
	if err := s.mkdirs(dir); err != nil {
		return err
	}
	w := &segWriter{set: s, dir: dir}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucket))
		var last uint64
		err := b.ForEach(func(k, v []byte) error {
			if len(k) != 8 || v == nil || binary.BigEndian.Uint64(k) == 0 {
				return fmt.Errorf("bucket %q is not a log: it has a key of %d bytes that is not a sequence number", bucket, len(k))
			}
			last = binary.BigEndian.Uint64(k)
			return w.add(last, v)
		})
		if next := b.Sequence() + 1; err == nil && next > last+1 {
			err = w.newSegment(next)
		}
		return err
	})
	if err = errors.Join(err, w.finish()); err != nil {
		return err
	}
	return syncDir(dir)
}

// segWriter writes records into new segment files, buffered, for a
// migration; each file is fsynced when it is done.
type segWriter struct {
	set  *logSet
	dir  string
	f    *os.File
	w    *bufio.Writer
	size int64
	rec  []byte
}

func (w *segWriter) add(seq uint64, value []byte) error {
	if w.f == nil || w.set.full(w.size, int64(recordHeader+len(value))) {
		if err := w.newSegment(seq); err != nil {
			return err
		}
	}
	w.rec = appendRecord(w.rec[:0], seq, value)
	w.size += int64(len(w.rec))
	_, err := w.w.Write(w.rec)
	return err
}

// newSegment finishes the current file and starts the one of first.
func (w *segWriter) newSegment(first uint64) error {
	if err := w.finish(); err != nil {
		return err
	}
	f, err := createSegment(w.dir, first)
	if err != nil {
		return err
	}
	w.f, w.w, w.size = f, bufio.NewWriterSize(f, 64<<10), 0
	return nil
}

// finish flushes, fsyncs and closes the current file, if any.
func (w *segWriter) finish() error {
	if w.f == nil {
		return nil
	}
	err := w.w.Flush()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.f = nil
	return err
}
