package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	bolt "go.etcd.io/bbolt"
)

// The logs (Append, Tail, LogSize, Evict) live in segment files next to
// the bbolt file, not in it: bbolt reads its file through a memory map, so
// every page a log touched (the newest leaf at each append, the whole log
// when sized at start or walked by retention) stayed resident and counted
// in the agent's RSS — about 1 MB an hour in a soak, all of a 50 MB audit
// log after a restart, against a 25 MB budget. Segment files are read and
// written with plain read and write calls, never mapped, so what a log
// touches is page cache the kernel owns and takes back, and the process
// holds only a few numbers per segment. No test can tell a mapped read
// from a plain one: keep it plain.
//
// For a store at path, log bucket b is the directory path.logs/b holding
//
//	<first seq, 20 digits>.seg  the records from that seq on (segfile.go);
//	                            only the newest segment is appended to
//	start                       the log start, in decimal: entries below
//	                            it are evicted (absent: none are)
//
// There is no lock of its own: the directory is used only by the process
// holding the bbolt file's lock, which Open takes.

// segmentRoll is the size past which appends go to a new segment: eviction
// deletes whole segments, so the log on disk is at most this much over
// what it holds.
const segmentRoll = 1 << 20

const startFile = "start"

var (
	errClosed = errors.New("store: closed")
	errStop   = errors.New("stop") // ends a walk over a log early
)

// logSet is the segment logs of one store, each opened at its first use.
type logSet struct {
	dir    string   // path.logs
	db     *bolt.DB // where the previous layout kept the logs
	roll   int64    // segmentRoll; tests make it small
	closed atomic.Bool

	mu   sync.Mutex
	logs map[string]*segLog
}

func newLogSet(dir string, db *bolt.DB) *logSet {
	return &logSet{dir: dir, db: db, roll: segmentRoll, logs: map[string]*segLog{}}
}

// segLog is one log bucket. Its mutex is held for a whole call but the
// reading of a tail, including Evict's callback.
type segLog struct {
	set  *logSet
	name string
	dir  string

	mu     sync.Mutex
	loaded bool
	err    error     // why the log cannot be used (its load failed), until reopened
	damage error     // rot the load skipped, not yet reported to a caller
	start  uint64    // the first seq not evicted
	next   uint64    // the seq of the next append
	segs   []segment // oldest first
	active *os.File  // the newest segment, open for appending once appended to
}

type segment struct {
	first uint64 // its name; its records are from first up to the next segment's first
	off   int64  // where its first entry at or after the log start begins (size: none)
	size  int64  // the bytes of its complete records
	live  int    // its entries at or after the log start
	bytes int64  // their values' bytes
}

// with runs fn on the log of bucket, loaded, under its lock.
func (s *logSet) with(bucket string, fn func(l *segLog) error) error {
	if err := checkLogName(bucket); err != nil {
		return err
	}
	s.mu.Lock()
	l := s.logs[bucket]
	if l == nil {
		l = &segLog{set: s, name: bucket, dir: filepath.Join(s.dir, bucket)}
		s.logs[bucket] = l
	}
	s.mu.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	if s.closed.Load() {
		return errClosed
	}
	if !l.loaded {
		l.loaded, l.err = true, l.load()
	}
	if l.err != nil {
		return l.err
	}
	if d := l.damage; d != nil {
		l.damage = nil
		return errors.Join(fn(l), d)
	}
	return fn(l)
}

// checkLogName admits the bucket names that are safe as a directory name:
// letters, digits, '.', '_' and '-', not "." or "..".
func checkLogName(bucket string) error {
	ok := bucket != "" && bucket != "." && bucket != ".."
	for _, c := range bucket {
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-')
	}
	if !ok {
		return fmt.Errorf("store: log bucket %q: a log's name is its directory's: letters, digits, '.', '_' and '-' only, not \".\" or \"..\"", bucket)
	}
	return nil
}

// close closes the open segment files; the logs cannot be used after.
func (s *logSet) close() error {
	s.closed.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, l := range s.logs {
		l.mu.Lock()
		errs = append(errs, l.closeActive())
		l.mu.Unlock()
	}
	return errors.Join(errs...)
}

// full reports whether a segment of size bytes is too full for a record
// of n more. A segment takes at least one record, however large.
func (s *logSet) full(size, n int64) bool { return size > 0 && size+n > s.roll }

// mkdirs creates the logs directory and dir in it if needed, each made
// durable by an fsync of its parent.
func (s *logSet) mkdirs(dir string) error {
	for _, d := range []string{s.dir, dir} {
		err := os.Mkdir(d, 0o750)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err == nil {
			err = syncDir(filepath.Dir(d))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (l *segLog) errorf(err error) error { return fmt.Errorf("store: log %q: %w", l.name, err) }

func (l *segLog) path(first uint64) string { return filepath.Join(l.dir, segName(first)) }

// load reads the log's directory (after moving the log out of bbolt if the
// previous layout has it there): the start, and each segment's counts. The
// newest segment loses an incomplete or corrupt tail, left by a crash in
// the middle of an append, and keeps every record before it; a bad record
// in an older segment, which nothing but rot makes, ends what is read of
// that segment and is reported to the next caller (l.damage).
func (l *segLog) load() error {
	if err := l.set.moveFromBolt(l.name, l.dir); err != nil {
		return l.errorf(fmt.Errorf("moving it out of the bbolt file: %w", err))
	}
	l.start, l.next, l.segs = 0, 1, nil
	entries, err := os.ReadDir(l.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // created by the first append
	}
	if err != nil {
		return l.errorf(err)
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case name == startFile:
			if l.start, err = readStart(filepath.Join(l.dir, name)); err != nil {
				return l.errorf(err)
			}
		case strings.HasSuffix(name, segSuffix):
			first, err := strconv.ParseUint(strings.TrimSuffix(name, segSuffix), 10, 64)
			if err != nil || first == 0 || name != segName(first) {
				return l.errorf(fmt.Errorf("%s: not a segment's name", filepath.Join(l.dir, name)))
			}
			l.segs = append(l.segs, segment{first: first}) // ReadDir sorts by name
		}
	}
	var last uint64
	for i := range l.segs {
		seg := &l.segs[i]
		end, err := l.scan(i, 0, -1, func(off int64, seq uint64, v []byte) error {
			last = seq
			if seq < l.start {
				seg.off = off + recordHeader + int64(len(v))
			} else {
				seg.live++
				seg.bytes += int64(len(v))
			}
			return nil
		})
		bad, ok := errors.AsType[*segmentError](err)
		switch {
		case ok && bad.err == nil && i == len(l.segs)-1:
			if err := truncateSegment(l.path(seg.first), end); err != nil {
				return l.errorf(err)
			}
		case ok && bad.err == nil:
			// Rot in an older segment (an SD card's): the records before
			// it stay readable, the file is left as it is for whoever
			// looks, and the log goes on — an audit log that refused
			// every append after one bad sector would lose the rest of
			// the robot's history. The caller hears of it once.
			l.damage = errors.Join(l.damage, fmt.Errorf("%w; the rest of that file is skipped", err))
		case err != nil:
			return err // scan named the log
		}
		seg.size = end
	}
	l.next = last + 1
	if n := len(l.segs); n > 0 {
		l.next = max(l.next, l.segs[n-1].first) // an empty newest segment
		if l.start > l.next {
			// Only a start file that rotted says so: deleting the log
			// below it would lose it all.
			return l.errorf(fmt.Errorf("%s: %d is past the end of the log (%d)", filepath.Join(l.dir, startFile), l.start, l.next))
		}
	}
	l.next = max(l.next, l.start) // everything evicted: the start is the next seq
	return l.dropEvicted()
}

// span is a part of a segment file, opened for reading.
type span struct {
	f            *os.File
	first, below uint64 // the bounds of its seqs (below 0: none)
	from, size   int64  // the bytes to read (size -1: to the end)
}

// open opens segment i for reading from byte from to byte size.
func (l *segLog) open(i int, from, size int64) (span, error) {
	sp := span{first: l.segs[i].first, from: from, size: size}
	if i+1 < len(l.segs) {
		sp.below = l.segs[i+1].first
	}
	f, err := os.Open(l.path(sp.first))
	if err != nil {
		return sp, l.errorf(err)
	}
	sp.f = f
	return sp, nil
}

// read calls fn with the records of sp and returns where they end. Its
// errors but fn's name the log. It uses nothing the lock guards.
func (l *segLog) read(sp span, fn func(off int64, seq uint64, value []byte) error) (int64, error) {
	end, err := readSegment(sp.f, sp.first, sp.below, sp.from, sp.size, fn)
	if _, ok := errors.AsType[*segmentError](err); ok {
		err = l.errorf(err)
	}
	return end, err
}

// scan reads segment i from byte from to byte size, as read does.
func (l *segLog) scan(i int, from, size int64, fn func(off int64, seq uint64, value []byte) error) (int64, error) {
	sp, err := l.open(i, from, size)
	if err != nil {
		return from, err
	}
	defer sp.f.Close()
	return l.read(sp, fn)
}

// unload closes the log after a failed change, so that the next call
// reads it again from what is on disk.
func (l *segLog) unload() {
	_ = l.closeActive()
	l.loaded = false
}

func (l *segLog) closeActive() error {
	if l.active == nil {
		return nil
	}
	err := l.active.Close()
	l.active = nil
	return err
}

// append writes value as the next entry and fsyncs it: one fsync per
// append, as bbolt did (the audit log batches its entries). Beyond keep
// entries (keep > 0) the oldest are evicted, which persists the start.
func (l *segLog) append(value []byte, keep int) (uint64, error) {
	if uint64(len(value)) > math.MaxUint32 {
		return 0, l.errorf(fmt.Errorf("an entry of %d bytes is too large", len(value)))
	}
	seq := l.next
	rec := appendRecord(make([]byte, 0, recordHeader+len(value)), seq, value)
	err := l.openActive(int64(len(rec)))
	if err == nil {
		_, err = l.active.Write(rec)
	}
	if err == nil {
		err = l.active.Sync()
	}
	if err != nil {
		l.unload() // the load cuts off what part of rec may have been written
		return 0, l.errorf(err)
	}
	seg := &l.segs[len(l.segs)-1]
	seg.size += int64(len(rec))
	seg.live++
	seg.bytes += int64(len(value))
	l.next++
	if keep > 0 && seq > uint64(keep) {
		_, _, err = l.evict(func(s uint64, _ json.RawMessage) bool { return s <= seq-uint64(keep) })
	}
	return seq, err
}

// openActive makes the newest segment ready for a record of n bytes: a
// new one when there is none or the newest is full, and open.
func (l *segLog) openActive(n int64) error {
	if k := len(l.segs); k > 0 && !l.set.full(l.segs[k-1].size, n) {
		if l.active == nil {
			f, err := os.OpenFile(l.path(l.segs[k-1].first), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			l.active = f
		}
		return nil
	}
	if err := l.closeActive(); err != nil {
		return err
	}
	if err := l.set.mkdirs(l.dir); err != nil {
		return err
	}
	f, err := createSegment(l.dir, l.next)
	if err != nil {
		return err
	}
	l.active = f
	l.segs = append(l.segs, segment{first: l.next})
	return syncDir(l.dir)
}

// tail calls fn with the last n entries of bucket, oldest first, reading
// only the newest segments that hold them. It opens them under the log's
// lock and reads them after: a record never changes once written, and an
// open file outlives its deletion by Evict, so appends and evictions go on
// while a long tail (a filtered audit query) is read, and fn may call back
// into the store.
func (s *logSet) tail(bucket string, n int, fn func(seq uint64, value json.RawMessage) error) error {
	var l *segLog
	var spans []span
	skip := 0 // entries of the first span before the last n
	defer func() {
		for _, sp := range spans {
			sp.f.Close()
		}
	}()
	err := s.with(bucket, func(lg *segLog) error {
		l = lg
		i := len(l.segs) - 1
		if i < 0 || n <= 0 {
			return nil
		}
		for i > 0 && l.segs[i].live < n {
			n -= l.segs[i].live
			i--
		}
		skip = max(0, l.segs[i].live-n)
		for ; i < len(l.segs); i++ {
			sp, err := l.open(i, l.segs[i].off, l.segs[i].size)
			if err != nil {
				return err
			}
			spans = append(spans, sp)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, sp := range spans {
		_, err := l.read(sp, func(_ int64, seq uint64, v []byte) error {
			if skip > 0 {
				skip--
				return nil
			}
			return fn(seq, v)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// size is what LogSize reports, from the counts kept since the load.
func (l *segLog) size() (entries int, bytes int64) {
	for _, seg := range l.segs {
		entries += seg.live
		bytes += seg.bytes
	}
	return entries, bytes
}

// evict moves the log start past the oldest entries while more says so,
// persists it, and deletes the segments wholly below it.
func (l *segLog) evict(more func(seq uint64, value json.RawMessage) bool) (entries int, bytes int64, err error) {
	start := l.next // when every entry goes
	for i := range l.segs {
		seg := &l.segs[i]
		_, err := l.scan(i, seg.off, seg.size, func(off int64, seq uint64, v []byte) error {
			if !more(seq, v) {
				start = seq
				return errStop
			}
			seg.off = off + recordHeader + int64(len(v))
			seg.live--
			seg.bytes -= int64(len(v))
			entries++
			bytes += int64(len(v))
			return nil
		})
		if errors.Is(err, errStop) {
			break
		}
		if err != nil {
			l.unload() // the counts changed above are read again
			return 0, 0, err
		}
	}
	if entries == 0 {
		return 0, 0, nil
	}
	l.start = start
	err = writeAtomic(l.dir, startFile, []byte(strconv.FormatUint(start, 10)+"\n"))
	if err == nil {
		err = l.dropEvicted()
	}
	if err != nil {
		l.unload()
		return 0, 0, l.errorf(err)
	}
	return entries, bytes, nil
}

// dropEvicted deletes the oldest segment files while they are wholly below
// the log start, the newest too when everything is evicted (the start is
// the next seq then). The load does it again after a crash in between.
func (l *segLog) dropEvicted() error {
	n := 0
	for n < len(l.segs) && l.segs[n].live == 0 && l.segs[n].first < l.start {
		n++
	}
	if n == 0 {
		return nil
	}
	if n == len(l.segs) {
		if err := l.closeActive(); err != nil {
			return err
		}
	}
	for _, seg := range l.segs[:n] {
		if err := os.Remove(l.path(seg.first)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	l.segs = slices.Delete(l.segs, 0, n)
	return syncDir(l.dir)
}

func readStart(path string) (uint64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	start, err := strconv.ParseUint(strings.TrimSpace(string(data)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: not a sequence number", path)
	}
	return start, nil
}

// writeAtomic replaces dir/name with data: a reader after a crash finds
// the old file or the new one, whole.
func writeAtomic(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}

// truncateSegment cuts a segment file to size, durably.
func truncateSegment(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	err = f.Truncate(size)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// syncDir makes the creation, deletion or renaming of dir's entries durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
