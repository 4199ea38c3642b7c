package record

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// Recorder writes the world model's stream to MCAP files. It is one more
// consumer of the stream (a worldmodel.Cursor), like MQTT and the
// dashboard: a pump goroutine reads the cursor and encodes, a writer
// goroutine writes, and a bounded queue between them absorbs a slow disk.
// Nothing the agent does ever waits for the recorder: what does not fit is
// dropped, counted and warned about.
type Recorder struct {
	world  Stream
	opts   Options
	clk    clock.Clock
	log    *slog.Logger
	header func() Header
	device string
	q      *queue
	// audio are the microphones' audio sources (<mic>.audio) the recorder
	// watches while a session records, with Options.Audio: a microphone
	// produces them only while someone watches.
	audio []string
	// files is what the plugin's header knows of the board's files: the
	// status lists those the last file could not carry.
	files *fileState

	mu       sync.Mutex
	sess     *session // nil: not recording
	gen      uint64
	running  bool // Run has started: a new session reads only what happens next
	state    string
	path     string        // the file being written
	pumpCtl  chan struct{} // a session started or stopped
	writeCtl chan struct{}
	// A reload's hand-over (handover.go): keep the open file at the stop,
	// and leave it in kept; adopted is the file handed to this recorder.
	keep    bool
	kept    chan kept
	adopted *file

	written, dropped, missed, skipped atomic.Uint64
	// Progress, for Through: the newest item the pump has handled, the
	// newest the writer has, and the messages between them.
	pumped, wrote atomic.Uint64
	inflight      atomic.Int64
	lastWarn      atomic.Int64 // unix nanos of the last drop warning
}

// Stream is the world model as the recorder reads it: a cursor over the
// stream, and demand for the sources that a session records only while
// someone watches them (the microphones' audio).
type Stream interface {
	NewCursor(fromStart bool) *worldmodel.Cursor
	Watch(source string) (stop func())
}

// session is one recording: into one file, or into a directory with
// rotation.
type session struct {
	gen  uint64
	file string // a single file, never rotated
	dir  string // rotating files in this directory
}

// New returns a recorder that is not recording yet. header is asked for
// every new file (it carries the build and the board).
func New(world Stream, o Options, clk clock.Clock, log *slog.Logger, device string, header func() Header) (*Recorder, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if clk == nil {
		clk = clock.Real()
	}
	if log == nil {
		log = slog.Default()
	}
	return &Recorder{world: world, opts: o, clk: clk, log: log, header: header, device: device,
		q: newQueue(o.Queue, o.QueueBytes), state: "idle",
		pumpCtl: make(chan struct{}, 1), writeCtl: make(chan struct{}, 1), kept: make(chan kept, 1)}, nil
}

// StartFile records into one file (it must not exist yet).
func (r *Recorder) StartFile(path string) { r.start(&session{file: path}) }

// StartDir records into rotating files in dir.
func (r *Recorder) StartDir(dir string) { r.start(&session{dir: dir}) }

func (r *Recorder) start(s *session) {
	r.mu.Lock()
	r.gen++
	s.gen = r.gen
	r.sess = s
	r.state = "recording"
	r.mu.Unlock()
	r.poke()
}

// Stop ends the recording; the file is completed (index, statistics) once
// what was queued is written.
func (r *Recorder) Stop() {
	r.mu.Lock()
	r.gen++
	r.sess = nil
	r.state = "idle"
	r.mu.Unlock()
	r.poke()
}

func (r *Recorder) poke() {
	for _, c := range []chan struct{}{r.pumpCtl, r.writeCtl} {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

func (r *Recorder) session() *session {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sess
}

// Through is the sequence number up to which the world model's stream is
// written (or dropped, or left out by the frame rule): a replay that
// records waits for it, so that feeding faster than the disk loses nothing.
func (r *Recorder) Through() uint64 {
	if r.inflight.Load() == 0 {
		return r.pumped.Load()
	}
	return r.wrote.Load()
}

// Status is the recorder's component of agent.status.
type Status struct {
	State         string `json:"state"` // idle, recording, or degraded: why
	File          string `json:"file,omitempty"`
	Written       uint64 `json:"written"`
	Dropped       uint64 `json:"dropped"`
	Missed        uint64 `json:"missed"`
	FramesSkipped uint64 `json:"frames_skipped"`
	Queued        int    `json:"queued"`
	// NotAttached are the settings naming board files the recording
	// carries by their SHA-256 only, or not at all (attach.go).
	NotAttached []string `json:"files_not_attached,omitempty"`
}

// Status reports what the recorder is doing and what it lost.
func (r *Recorder) Status() Status {
	r.mu.Lock()
	st, path := r.state, r.path
	r.mu.Unlock()
	return Status{State: st, File: path, Written: r.written.Load(), Dropped: r.dropped.Load(),
		Missed: r.missed.Load(), FramesSkipped: r.skipped.Load(), Queued: r.q.len(), NotAttached: r.files.notAttached()}
}

func (r *Recorder) setState(state, path string) {
	r.mu.Lock()
	if r.sess != nil {
		r.state = state
	}
	r.path = path
	r.mu.Unlock()
}

// Run pumps and writes until ctx ends, then completes the open file with
// what is queued. It returns when the file is closed.
func (r *Recorder) Run(ctx context.Context) {
	r.mu.Lock()
	fromStart := !r.running
	r.running = true
	r.mu.Unlock()
	done, pumped := make(chan struct{}), make(chan struct{})
	go func() { defer close(done); r.write(pumped) }()
	r.pump(ctx, fromStart)
	close(pumped) // the writer completes the file with what the pump queued
	<-done
}

// readBatch bounds one Read: an Item is ~400 bytes, and the slice keeps
// its capacity for the recorder's life.
const readBatch = 64

// pump reads the stream while a session is on and queues its messages.
func (r *Recorder) pump(ctx context.Context, fromStart bool) {
	var (
		cur   *worldmodel.Cursor
		sess  *session
		enc   *encoder
		items []worldmodel.Item
		msgs  []Message
		stops []func()
	)
	unwatch := func() {
		for _, stop := range stops {
			stop()
		}
		stops = stops[:0]
	}
	defer unwatch()
	// read queues the next batch of the stream; it returns how many items
	// it read.
	read := func() int {
		items = cur.Read(items[:0], readBatch)
		if n := cur.Lost(); n > 0 {
			r.missed.Add(n)
			r.warnDrop("the recorder fell behind the world model's rings", n)
		}
		skipped := enc.skipped
		for i := range items {
			msgs = enc.encode(msgs[:0], items[i])
			for _, m := range msgs {
				r.inflight.Add(1)
				if !r.q.push(entry{sess: sess, msg: m}) {
					r.inflight.Add(-1)
					r.dropped.Add(1)
					r.warnDrop("the recorder's queue is full (the disk is slow or stalled)", 1)
				}
			}
			r.pumped.Store(items[i].Seq())
		}
		r.skipped.Add(enc.skipped - skipped)
		n := len(items)
		clear(items) // no references to blobs while waiting
		clear(msgs)
		return n
	}
	for {
		if s := r.session(); s != sess {
			sess, cur, enc = s, nil, nil
			unwatch()
			if s != nil && r.opts.Audio {
				for _, src := range r.audio {
					stops = append(stops, r.world.Watch(src))
				}
			}
			if s != nil {
				cur = r.world.NewCursor(fromStart)
				enc = newEncoder(r.opts.Frames)
			}
			fromStart = false
		}
		var wake <-chan struct{}
		if cur != nil {
			wake = cur.Wait()
			if read() > 0 {
				continue
			}
		}
		select {
		case <-ctx.Done():
			// What happened up to the stop belongs in the file; a full
			// queue still drops rather than holds the stop up.
			for cur != nil && read() > 0 {
			}
			return
		case <-r.pumpCtl:
		case <-wake:
		}
	}
}

// warnDrop logs lost messages at most once a minute.
func (r *Recorder) warnDrop(why string, n uint64) {
	now := r.clk.Now().UnixNano()
	last := r.lastWarn.Load()
	if last != 0 && now-last < int64(time.Minute) {
		return
	}
	if r.lastWarn.CompareAndSwap(last, now) {
		r.log.Warn("recorder: messages dropped; the agent is not affected", "why", why, "now", n,
			"dropped_total", r.dropped.Load(), "missed_total", r.missed.Load())
	}
}

// write takes messages off the queue into the session's file until the
// pump has stopped, then writes what is left and closes the file.
func (r *Recorder) write(stop <-chan struct{}) {
	w := &writer{r: r}
	flush := r.clk.NewTimer(r.opts.FlushEvery)
	defer flush.Stop()
	for {
		e, ok := r.q.pop()
		if ok {
			w.put(e)
			if e.msg.Seq > 0 {
				r.wrote.Store(e.msg.Seq)
			}
			r.inflight.Add(-1)
			continue
		}
		if w.f != nil && w.sess != r.session() { // stopped or restarted: complete the file
			w.closeFile()
		}
		select {
		case <-stop:
			for e, ok := r.q.pop(); ok; e, ok = r.q.pop() {
				w.put(e)
			}
			w.park()
			return
		case <-r.q.ready:
		case <-r.writeCtl:
		case <-flush.C():
			w.flush()
			flush.Reset(r.opts.FlushEvery)
		}
	}
}

func (r *Recorder) stats() Message {
	data := marshal(map[string]uint64{"written": r.written.Load(), "dropped": r.dropped.Load(),
		"missed": r.missed.Load(), "frames_skipped": r.skipped.Load()})
	return Message{Topic: TopicStats, Schema: SchemaStats, Kind: KindStats, Source: "recorder", Time: r.clk.Now(), Data: data}
}

func (r *Recorder) final() map[string]string {
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	return map[string]string{"written": u(r.written.Load()), "dropped": u(r.dropped.Load()),
		"missed": u(r.missed.Load()), "frames_skipped": u(r.skipped.Load())}
}
