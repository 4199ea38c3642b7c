package record

// A config reload replaces the whole node, recorder included, and the new
// node's world model starts afresh (tools/admin's config.reload). A
// recording must go on across it, in the same file, so that it holds the
// reload and what the new node did after it: the old recorder hands its
// open file to the new one instead of completing it.

// Continuation is a recording handed from the recorder of a node that
// stops for a reload to the recorder of the node that replaces it.
type Continuation struct {
	from *Recorder
}

// HandOver makes the recording go on in the next node's recorder: when
// this one stops, its open file is kept for Continuation.To instead of
// completed. Nil when it is not recording.
func (r *Recorder) HandOver() *Continuation {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess == nil {
		return nil
	}
	r.keep = true
	return &Continuation{from: r}
}

// kept is what a recorder that handed over leaves when it stops: its
// session and open file (nil if none was open), and its counters.
type kept struct {
	sess                              *session
	f                                 *file
	written, dropped, missed, skipped uint64
}

// To makes next record on into the handed-over file, with its counters.
// Call it once the old recorder has stopped and before next runs. It
// reports false (and completes the file) when there is nothing to take:
// the old recorder never ran.
func (c *Continuation) To(next *Recorder) bool {
	select {
	case k := <-c.from.kept:
		next.written.Add(k.written)
		next.dropped.Add(k.dropped)
		next.missed.Add(k.missed)
		next.skipped.Add(k.skipped)
		next.mu.Lock()
		next.adopted = k.f
		next.mu.Unlock()
		next.start(&session{file: k.sess.file, dir: k.sess.dir})
		return true
	default:
		return false
	}
}

// Close completes the handed-over file when no recorder takes it (the
// next node could not be built).
func (c *Continuation) Close() {
	select {
	case k := <-c.from.kept:
		if k.f != nil {
			w := &writer{r: c.from, f: k.f}
			w.closeFile()
		}
	default:
	}
}

// park leaves the writer's file for the next recorder (see HandOver), or
// completes it when none was asked for.
func (w *writer) park() {
	r := w.r
	r.mu.Lock()
	keep, sess := r.keep, r.sess
	r.mu.Unlock()
	if !keep || sess == nil {
		w.closeFile()
		return
	}
	if w.sess != sess { // a file of an earlier session, or none yet
		w.closeFile()
	}
	r.kept <- kept{sess: sess, f: w.f, written: r.written.Load(), dropped: r.dropped.Load(),
		missed: r.missed.Load(), skipped: r.skipped.Load()}
	w.f = nil
}

// adoptFile gives the writer the file a previous recorder handed over for
// session s, if any.
func (w *writer) adoptFile(s *session) bool {
	r := w.r
	r.mu.Lock()
	f := r.adopted
	r.adopted = nil
	r.mu.Unlock()
	if f == nil {
		return false
	}
	w.f, w.sess, w.failed = f, s, nil
	w.parts++
	r.setState("recording", f.path)
	r.log.Info("recording goes on after a reload", "file", f.path)
	return true
}
