package record

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// writer is the writer goroutine's state: the open file and, after a disk
// failure, when to try again. A failing disk (full, read-only, removed)
// pauses the recording with a warning; messages are dropped and counted
// until a new file can be written, and the agent never notices.
type writer struct {
	r       *Recorder
	f       *file
	sess    *session // the session f belongs to
	parts   int      // files opened for a single-file session
	failed  *session // the session whose disk failed …
	retryAt time.Time
}

func (w *writer) put(e entry) {
	r := w.r
	if w.f != nil && w.sess != e.sess {
		w.closeFile()
	}
	if w.f == nil && !w.open(e.sess) {
		r.dropped.Add(1)
		return
	}
	if e.sess.dir != "" && w.due() {
		w.closeFile()
		if !w.open(e.sess) {
			r.dropped.Add(1)
			return
		}
	}
	if err := w.f.write(&e.msg); err != nil {
		w.fail(err)
		r.dropped.Add(1)
		return
	}
	r.written.Add(1)
}

// due: a rotating file is full or old enough.
func (w *writer) due() bool {
	o := w.r.opts
	return w.f.size() >= o.MaxBytes || w.r.clk.Now().Sub(w.f.opened) >= o.MaxAge
}

func (w *writer) open(s *session) bool {
	r := w.r
	now := r.clk.Now()
	if w.failed == s && now.Before(w.retryAt) {
		return false
	}
	if w.sess != s {
		w.parts = 0
	}
	if w.adoptFile(s) {
		return true
	}
	path, err := w.name(s, now)
	var f *file
	if err == nil {
		f, err = createFile(path, r.opts, r.header(), now)
	}
	if err != nil {
		w.sess = s
		w.failed, w.retryAt = s, now.Add(r.opts.Retry)
		r.log.Warn("recorder: cannot create a file; recording paused, the agent runs on", "dir", filepath.Dir(path),
			"err", err, "retry_in", r.opts.Retry)
		r.setState("degraded: cannot create a file: "+err.Error(), "")
		return false
	}
	if w.failed == s {
		r.log.Info("recorder: recording resumed", "file", path)
	}
	w.f, w.sess, w.failed = f, s, nil
	w.parts++
	r.setState("recording", path)
	r.log.Info("recording", "file", path)
	if s.dir != "" {
		w.prune(s.dir)
	}
	return true
}

// name is the next file of a session: the session's file, then (after a
// disk failure) file-2.mcap, file-3.mcap …; in a directory,
// <device>-<UTC time>.mcap.
func (w *writer) name(s *session, now time.Time) (string, error) {
	if s.file != "" {
		if err := os.MkdirAll(filepath.Dir(s.file), 0o755); err != nil {
			return s.file, err
		}
		if w.parts == 0 {
			return s.file, nil
		}
		ext := filepath.Ext(s.file)
		return fmt.Sprintf("%s-%d%s", strings.TrimSuffix(s.file, ext), w.parts+1, ext), nil
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return s.dir, err
	}
	base := filepath.Join(s.dir, w.r.device+"-"+now.UTC().Format("20060102T150405Z"))
	path := base + ".mcap"
	for i := 2; fileExists(path); i++ {
		path = fmt.Sprintf("%s-%d.mcap", base, i)
	}
	return path, nil
}

func fileExists(path string) bool { _, err := os.Lstat(path); return err == nil }

// prune keeps the newest Keep recordings of this device in dir (names sort
// by time); other files are never touched.
func (w *writer) prune(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var ours []string
	for _, e := range ents {
		if n := e.Name(); e.Type().IsRegular() && strings.HasPrefix(n, w.r.device+"-") && strings.HasSuffix(n, ".mcap") {
			ours = append(ours, n)
		}
	}
	slices.Sort(ours)
	for len(ours) > w.r.opts.Keep {
		if err := os.Remove(filepath.Join(dir, ours[0])); err != nil {
			w.r.log.Warn("recorder: cannot delete an old recording", "err", err)
		}
		ours = ours[1:]
	}
}

// fail abandons the open file after a write error and pauses the session.
func (w *writer) fail(err error) {
	r := w.r
	path := w.f.path
	w.f.abandon()
	w.f = nil
	w.failed, w.retryAt = w.sess, r.clk.Now().Add(r.opts.Retry)
	r.log.Warn("recorder: the disk refused a write; recording paused, the agent runs on", "file", path,
		"err", err, "retry_in", r.opts.Retry, "kept", "the file up to its last complete chunk")
	r.setState("degraded: writing failed: "+err.Error(), "")
}

// flush closes the chunk being filled and syncs, with the counters.
func (w *writer) flush() {
	if w.f == nil {
		return
	}
	m := w.r.stats()
	if err := w.f.flush(&m); err != nil {
		w.fail(err)
		return
	}
	w.r.written.Add(1)
}

func (w *writer) closeFile() {
	if w.f == nil {
		return
	}
	if err := w.f.close(w.r.final()); err != nil {
		w.r.log.Warn("recorder: completing the file failed; it is readable up to its last complete chunk", "file", w.f.path, "err", err)
	}
	w.r.log.Info("recording closed", "file", w.f.path, "messages", w.f.msgs)
	w.f = nil
	w.r.setState("recording", "")
}
