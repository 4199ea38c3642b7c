package store

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// openBolt opens the store at path, with segments that roll past roll
// bytes (0: the default), closed when the test ends.
func openBolt(t *testing.T, path string, roll int64) *Bolt {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if roll > 0 {
		s.logs.roll = roll
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func closeStore(t *testing.T, s Store) {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// appendRange appends the numbers from to to as the entries of seq from to to.
func appendRange(t *testing.T, s Store, bucket string, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		if seq, err := s.Append(bucket, i, 0); err != nil || seq != uint64(i) {
			t.Fatalf("Append %d: seq %d, %v", i, seq, err)
		}
	}
}

// tail returns the seqs of the last n entries, checking each value is its seq.
func tail(t *testing.T, s Store, bucket string, n int) []uint64 {
	t.Helper()
	var seqs []uint64
	err := s.Tail(bucket, n, func(seq uint64, v json.RawMessage) error {
		if string(v) != fmt.Sprint(seq) {
			t.Fatalf("entry %d holds %s", seq, v)
		}
		seqs = append(seqs, seq)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return seqs
}

func seqRange(from, to uint64) []uint64 {
	var r []uint64
	for s := from; s <= to; s++ {
		r = append(r, s)
	}
	return r
}

// checkLog checks the log holds the entries from to to, by Tail and LogSize.
func checkLog(t *testing.T, s Store, bucket string, from, to uint64) {
	t.Helper()
	if got, want := tail(t, s, bucket, 1000), seqRange(from, to); !slices.Equal(got, want) {
		t.Fatalf("log holds %v, want %v", got, want)
	}
	var bytes int64
	for seq := from; seq <= to; seq++ {
		bytes += int64(len(fmt.Sprint(seq)))
	}
	if n, b, err := s.LogSize(bucket); err != nil || n != len(seqRange(from, to)) || b != bytes {
		t.Fatalf("LogSize = %d entries, %d bytes, %v; want %d, %d", n, b, err, len(seqRange(from, to)), bytes)
	}
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*"+segSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A record of a one- or two-digit number is 17 or 18 bytes: with a roll
// of 40, a segment holds two.
const twoPerSegment = 40

func TestLogReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	dir := path + ".logs/log"
	s := openBolt(t, path, twoPerSegment)
	appendRange(t, s, "log", 1, 9)
	closeStore(t, s)

	s = openBolt(t, path, twoPerSegment)
	checkLog(t, s, "log", 1, 9)
	appendRange(t, s, "log", 10, 11)
	if n := len(segFiles(t, dir)); n != 6 {
		t.Fatalf("%d segments for 11 entries", n)
	}
	// Entries 1-4 are the first two segments, 5 half of the third.
	if n, b, err := s.Evict("log", func(seq uint64, _ json.RawMessage) bool { return seq <= 5 }); n != 5 || b != 5 || err != nil {
		t.Fatalf("Evict = %d, %d, %v", n, b, err)
	}
	if files := segFiles(t, dir); len(files) != 4 || filepath.Base(files[0]) != segName(5) {
		t.Fatalf("segments after Evict: %v", files)
	}
	checkLog(t, s, "log", 6, 11)
	closeStore(t, s)

	s = openBolt(t, path, twoPerSegment)
	checkLog(t, s, "log", 6, 11)
	appendRange(t, s, "log", 12, 12)
	if n, _, err := s.Evict("log", func(uint64, json.RawMessage) bool { return true }); n != 7 || err != nil {
		t.Fatalf("Evict of everything = %d, %v", n, err)
	}
	if files := segFiles(t, dir); len(files) != 0 {
		t.Fatalf("segments left when everything is evicted: %v", files)
	}
	closeStore(t, s)

	s = openBolt(t, path, twoPerSegment)
	checkLog(t, s, "log", 13, 12) // empty
	appendRange(t, s, "log", 13, 13)
	checkLog(t, s, "log", 13, 13)
}

func TestLogTailAcrossSegments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := openBolt(t, path, 100) // five records a segment
	appendRange(t, s, "log", 1, 99)
	for _, n := range []int{0, 1, 4, 5, 6, 10, 11, 50, 98, 99, 100, 500} {
		if got, want := tail(t, s, "log", n), seqRange(uint64(max(1, 100-n)), 99); !slices.Equal(got, want) {
			t.Fatalf("Tail %d = %v", n, got)
		}
	}
	if _, _, err := s.Evict("log", func(seq uint64, _ json.RawMessage) bool { return seq < 23 }); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{76, 77, 78, 1000} {
		if got, want := tail(t, s, "log", n), seqRange(uint64(max(23, 100-n)), 99); !slices.Equal(got, want) {
			t.Fatalf("after Evict, Tail %d = %v", n, got)
		}
	}
	// Tail reads only the segments it needs: it does not notice the
	// oldest ones are gone.
	for _, f := range segFiles(t, path+".logs/log")[:5] {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if got := tail(t, s, "log", 12); !slices.Equal(got, seqRange(88, 99)) {
		t.Fatalf("Tail 12 = %v", got)
	}
}

// A tail is read without the log's lock: its callback may change the log,
// and sees the entries there were when Tail was called.
func TestLogTailWhileTheLogChanges(t *testing.T) {
	s := openBolt(t, filepath.Join(t.TempDir(), "s.db"), twoPerSegment)
	appendRange(t, s, "log", 1, 9)
	var got []uint64
	err := s.Tail("log", 7, func(seq uint64, v json.RawMessage) error {
		if seq == 3 {
			if n, _, err := s.Evict("log", func(uint64, json.RawMessage) bool { return true }); n != 9 || err != nil {
				t.Fatalf("Evict in Tail: %d, %v", n, err)
			}
			appendRange(t, s, "log", 10, 10)
		}
		if string(v) != fmt.Sprint(seq) {
			t.Fatalf("entry %d holds %s", seq, v)
		}
		got = append(got, seq)
		return nil
	})
	if err != nil || !slices.Equal(got, seqRange(3, 9)) {
		t.Fatalf("Tail = %v, %v", got, err)
	}
	checkLog(t, s, "log", 10, 10)
}

// A crash in the middle of an append leaves a torn record at the end of
// the newest segment: the reopen cuts it off and keeps what is before.
func TestLogTornTail(t *testing.T) {
	for name, tear := range map[string]func(data []byte) []byte{
		"truncated mid-record":    func(data []byte) []byte { return data[:len(data)-3] },
		"truncated mid-header":    func(data []byte) []byte { return data[:recordHeader+1+5] },
		"garbage after":           func(data []byte) []byte { return append(data, "\x00\x00\x00\x03garbage-bytes"...) },
		"a huge length after":     func(data []byte) []byte { return append(data, "\xff\xff\xff\xff\x00\x00\x00\x00"...) },
		"a few bytes after":       func(data []byte) []byte { return append(data, 1, 2, 3) },
		"last record bit-flipped": func(data []byte) []byte { data[len(data)-1] ^= 1; return data },
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.db")
			s := openBolt(t, path, twoPerSegment)
			appendRange(t, s, "log", 1, 6) // the newest segment holds 5 and 6
			closeStore(t, s)
			newest := filepath.Join(path+".logs/log", segName(5))
			data, err := os.ReadFile(newest)
			if err != nil {
				t.Fatal(err)
			}
			kept := uint64(6)
			if len(tear(slices.Clone(data))) <= len(data) {
				kept = 5 // the tear took record 6
			}
			if err := os.WriteFile(newest, tear(data), 0o640); err != nil {
				t.Fatal(err)
			}
			s = openBolt(t, path, twoPerSegment)
			checkLog(t, s, "log", 1, kept)
			appendRange(t, s, "log", int(kept)+1, 8)
			closeStore(t, s)
			s = openBolt(t, path, twoPerSegment)
			checkLog(t, s, "log", 1, 8)
		})
	}
}

// A bad record anywhere but at the end of the newest segment is rot, not
// a crash: the log reports where it is, not what it held.
func TestLogCorruptOlderSegment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := openBolt(t, path, 200)
	for i := range 12 {
		if _, err := s.Append("audit", fmt.Sprintf("secret-%02d", i), 0); err != nil {
			t.Fatal(err)
		}
	}
	closeStore(t, s)
	first := filepath.Join(path+".logs/audit", segName(1))
	data, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	const rec = recordHeader + len(`"secret-00"`)
	data[rec+recordHeader+3]++ // the value of entry 2
	if err := os.WriteFile(first, data, 0o640); err != nil {
		t.Fatal(err)
	}
	s = openBolt(t, path, 200)
	_, _, err = s.LogSize("audit")
	for _, want := range []string{`"audit"`, first, fmt.Sprintf("offset %d", rec), "checksum"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("LogSize of a log with a rotted record: %v; want it to say %s", err, want)
		}
	}
	if strings.Contains(err.Error(), "secret") || strings.Count(err.Error(), "store:") != 1 {
		t.Fatalf("the error quotes the record: %v", err)
	}
	// Reported once; the log goes on with what is readable: entry 1 of
	// the rotted segment, the later segments, and new entries.
	var seqs []uint64
	if err := s.Tail("audit", 100, func(seq uint64, _ json.RawMessage) error { seqs = append(seqs, seq); return nil }); err != nil {
		t.Fatalf("Tail after the report: %v", err)
	}
	if len(seqs) == 0 || seqs[0] != 1 || seqs[len(seqs)-1] != 12 || slices.Contains(seqs, 2) {
		t.Fatalf("readable seqs %v", seqs)
	}
	if seq, err := s.Append("audit", "more", 0); err != nil || seq != 13 {
		t.Fatalf("Append to a log with a rotted record: %d %v", seq, err)
	}
	if _, err := os.Stat(first); err != nil {
		t.Fatalf("the rotted segment is gone: %v", err)
	}
}

func TestLogBucketNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := openBolt(t, path, 0)
	for _, name := range []string{"../x", "a/b", "", "..", ".", "a b", "x~", `a\b`, "é"} {
		if _, err := s.Append(name, 1, 0); err == nil {
			t.Errorf("Append to log %q", name)
		}
		if err := s.Tail(name, 1, func(uint64, json.RawMessage) error { return nil }); err == nil {
			t.Errorf("Tail of log %q", name)
		}
		if _, _, err := s.LogSize(name); err == nil {
			t.Errorf("LogSize of log %q", name)
		}
		if _, _, err := s.Evict(name, func(uint64, json.RawMessage) bool { return true }); err == nil {
			t.Errorf("Evict of log %q", name)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(path), "x")); err == nil {
		t.Fatal("a log escaped its directory")
	}
	for _, name := range []string{"audit.safety", "a-b_C9", "...x"} {
		if _, err := s.Append(name, 1, 0); err != nil {
			t.Errorf("Append to log %q: %v", name, err)
		}
	}
}

func TestLogConcurrentUse(t *testing.T) {
	s := openBolt(t, filepath.Join(t.TempDir(), "s.db"), 64)
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string][]uint64{}
	for w := range 4 {
		bucket := []string{"a", "b"}[w%2]
		wg.Go(func() {
			for range 25 {
				seq, err := s.Append(bucket, 0, 0)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[bucket] = append(seen[bucket], seq)
				mu.Unlock()
				_, _, _ = s.LogSize(bucket)
				_ = s.Tail(bucket, 3, func(uint64, json.RawMessage) error { return nil })
			}
		})
	}
	wg.Wait()
	for _, bucket := range []string{"a", "b"} {
		slices.Sort(seen[bucket])
		if !slices.Equal(seen[bucket], seqRange(1, 50)) {
			t.Fatalf("log %s gave seqs %v", bucket, seen[bucket])
		}
		if n, _, err := s.LogSize(bucket); n != 50 || err != nil {
			t.Fatalf("log %s: %d entries, %v", bucket, n, err)
		}
	}
}

// A start file past the end of the log is rot: the log is kept, not
// evicted whole.
func TestLogStartPastTheEnd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s := openBolt(t, path, 0)
	appendRange(t, s, "log", 1, 3)
	closeStore(t, s)
	if _, err := s.Append("log", 4, 0); err == nil {
		t.Fatal("Append to a closed store")
	}
	if err := os.WriteFile(filepath.Join(path+".logs/log", startFile), []byte("99\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	s = openBolt(t, path, 0)
	if _, _, err := s.LogSize("log"); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Fatalf("LogSize with a start past the end: %v", err)
	}
	if files := segFiles(t, path+".logs/log"); len(files) != 1 {
		t.Fatalf("segments: %v", files)
	}
}
