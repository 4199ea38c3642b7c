package store

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// seqKey is the key of a log entry in the bbolt layout before segment files.
func seqKey(seq uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], seq)
	return k[:]
}

// oldLog is a log as the previous layout kept it in bbolt.
type oldLog struct {
	from, to uint64 // the entries left, from to to (none if from > to)
	sequence uint64 // the last seq given
}

// writeOldLayout writes logs the way the previous Bolt did, and a
// key-value bucket "kv".
func writeOldLayout(t *testing.T, path string, logs map[string]oldLog) {
	t.Helper()
	db, err := bolt.Open(path, 0o640, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		for name, l := range logs {
			b, err := tx.CreateBucketIfNotExists([]byte(name))
			if err != nil {
				return err
			}
			for seq := l.from; seq <= l.to; seq++ {
				if err := b.Put(seqKey(seq), []byte(fmt.Sprint(seq))); err != nil {
					return err
				}
			}
			if err := b.SetSequence(l.sequence); err != nil {
				return err
			}
		}
		b, err := tx.CreateBucketIfNotExists([]byte("kv"))
		if err != nil {
			return err
		}
		return b.Put([]byte("k"), []byte(`"v"`))
	})
	if err != nil {
		t.Fatal(err)
	}
}

func boltBuckets(t *testing.T, s *Bolt) []string {
	t.Helper()
	var names []string
	_ = s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, _ *bolt.Bucket) error { names = append(names, string(name)); return nil })
	})
	slices.Sort(names)
	return names
}

var oldLogs = map[string]oldLog{
	"audit":        {from: 5, to: 30, sequence: 30},
	"audit.safety": {from: 1, to: 0, sequence: 7}, // everything evicted
	"gap":          {from: 3, to: 4, sequence: 9}, // the newest evicted (keep)
	"unused":       {from: 1, to: 0, sequence: 0}, // created, never appended to
}

// checkMigrated checks the logs of oldLogs moved, and appends to each.
func checkMigrated(t *testing.T, s *Bolt) {
	t.Helper()
	for name, l := range oldLogs {
		checkLog(t, s, name, l.from, l.to)
	}
	if got := boltBuckets(t, s); !slices.Equal(got, []string{"kv"}) {
		t.Fatalf("bbolt buckets after the move: %v", got)
	}
	for name, l := range oldLogs {
		appendRange(t, s, name, int(l.sequence)+1, int(l.sequence)+1)
	}
	var v string
	if ok, err := s.Get("kv", "k", &v); !ok || err != nil || v != "v" {
		t.Fatalf("the key-value bucket: %q %v %v", v, ok, err)
	}
}

func TestLogMigratesFromBolt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edgeagent.db")
	writeOldLayout(t, path, oldLogs)
	s := openBolt(t, path, 60) // several segments for "audit"
	checkMigrated(t, s)
	if n := len(segFiles(t, path+".logs/audit")); n < 5 {
		t.Fatalf("audit moved into %d segments", n)
	}
	closeStore(t, s)

	s = openBolt(t, path, 60) // moves nothing again
	for name, l := range oldLogs {
		if got, want := tail(t, s, name, 100), append(seqRange(l.from, l.to), l.sequence+1); !slices.Equal(got, want) {
			t.Fatalf("%s after a reopen holds %v, want %v", name, got, want)
		}
	}
}

// A bucket that is not a log is not moved, nor deleted.
func TestLogMigrationRefusesAKeyValueBucket(t *testing.T) {
	path := filepath.Join(t.TempDir(), "edgeagent.db")
	writeOldLayout(t, path, nil)
	s := openBolt(t, path, 0)
	if _, _, err := s.LogSize("kv"); err == nil || !strings.Contains(err.Error(), "not a log") {
		t.Fatalf("LogSize of a key-value bucket: %v", err)
	}
	if got := boltBuckets(t, s); !slices.Equal(got, []string{"kv"}) {
		t.Fatalf("bbolt buckets: %v", got)
	}
	if _, err := os.Stat(path + ".logs/kv"); err == nil {
		t.Fatal("a key-value bucket was moved")
	}
}

// A move cut short by a crash is done again, or finished, without losing
// or duplicating an entry.
func TestLogMigrationAfterACrash(t *testing.T) {
	t.Run("before the rename", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "edgeagent.db")
		writeOldLayout(t, path, oldLogs)
		half := path + ".logs/audit~"
		if err := os.MkdirAll(half, 0o750); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(half, segName(5)), []byte("half written"), 0o640); err != nil {
			t.Fatal(err)
		}
		s := openBolt(t, path, 0)
		checkMigrated(t, s)
		if _, err := os.Stat(half); err == nil {
			t.Fatal("the half-written directory is left")
		}
	})
	t.Run("after the rename", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "edgeagent.db")
		writeOldLayout(t, path, oldLogs)
		s := openBolt(t, path, 0)
		for name, l := range oldLogs {
			checkLog(t, s, name, l.from, l.to)
		}
		closeStore(t, s)
		writeOldLayout(t, path, oldLogs) // as if the buckets were never deleted
		s = openBolt(t, path, 0)
		checkMigrated(t, s)
	})
}
