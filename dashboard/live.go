package dashboard

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// hub is the live channel: one pump reads the world model's stream by
// cursor (the one publish point MQTT and the recorder read too) and hands
// each encoded message to every client's bounded queue. The pump runs only
// while some client is connected: a closed page costs nothing.
type hub struct {
	ctx   context.Context
	world stream
	size  int // per-client queue
	max   int // clients

	mu      sync.Mutex
	clients map[*client]struct{}
	stop    context.CancelFunc // the running pump's
	pumps   sync.WaitGroup

	sent, dropped, missed atomic.Uint64
}

// client is one live channel's queue of encoded messages.
type client struct {
	ch      chan []byte
	dropped atomic.Uint64
}

// stream is the world model's stream, which the pump reads by cursor.
type stream interface {
	NewCursor(fromStart bool) *worldmodel.Cursor
}

func newHub(ctx context.Context, world stream, size, max int) *hub {
	return &hub{ctx: ctx, world: world, size: size, max: max, clients: map[*client]struct{}{}}
}

// join adds a client, starting the pump for the first; nil when full.
func (h *hub) join() *client {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) >= h.max || h.ctx.Err() != nil {
		return nil
	}
	c := &client{ch: make(chan []byte, h.size)}
	h.clients[c] = struct{}{}
	if h.stop == nil {
		ctx, stop := context.WithCancel(h.ctx)
		h.stop = stop
		// The cursor starts here, not in the goroutine: what happens after
		// join returns reaches the client.
		cur := h.world.NewCursor(false)
		h.pumps.Add(1)
		go func() { defer h.pumps.Done(); h.pump(ctx, cur) }()
	}
	return c
}

// leave removes a client, stopping the pump with the last.
func (h *hub) leave(c *client) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.clients, c)
	if len(h.clients) == 0 && h.stop != nil {
		h.stop()
		h.stop = nil
	}
}

// wait returns once no pump runs (after ctx ended).
func (h *hub) wait() { h.pumps.Wait() }

// clientCount is how many live channels are open.
func (h *hub) clientCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// pumpBatch bounds one read of the stream.
const pumpBatch = 128

func (h *hub) pump(ctx context.Context, cur *worldmodel.Cursor) {
	var (
		items []worldmodel.Item
		buf   []byte
	)
	for {
		wake := cur.Wait()
		items = cur.Read(items[:0], pumpBatch)
		if n := cur.Lost(); n > 0 {
			h.missed.Add(n)
			h.broadcast([]byte(`{"t":"gap","n":` + strconv.FormatUint(n, 10) + "}"))
		}
		for i := range items {
			buf = encodeItem(buf[:0], &items[i])
			if len(buf) > 0 {
				h.broadcast(buf)
			}
		}
		n := len(items)
		clear(items) // no references to blobs while waiting
		if n > 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		}
	}
}

// broadcast gives each client its own copy of msg, or counts a drop for a
// client whose queue is full: the pump never waits for a client.
func (h *hub) broadcast(msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.clients) == 0 {
		return
	}
	out := append([]byte(nil), msg...) // shared, read only, by every client
	for c := range h.clients {
		select {
		case c.ch <- out:
			h.sent.Add(1)
		default:
			c.dropped.Add(1)
			h.dropped.Add(1)
		}
	}
}

// maxRecordData bounds a journal record on the live channel: an LLM
// exchange carries its whole prompt and answer, so a bigger record goes
// with its large fields replaced by their sizes, and the page asks for the
// whole record (/api/record/{seq}) when it is opened. Client queues are
// bounded in messages; this bounds them in bytes too.
const (
	maxRecordData = 4 << 10
	maxFieldData  = 256
)

// encodeItem appends one stream item as a live message; blobs (frames go
// by the camera stream) give nothing.
func encodeItem(b []byte, it *worldmodel.Item) []byte { return encode(b, it, repeatKey(it)) }

// encode is encodeItem with the item's repeat key already known.
func encode(b []byte, it *worldmodel.Item, rep string) []byte {
	switch it.Kind {
	case worldmodel.ItemObservation:
		o := &it.Obs
		switch o.Kind {
		case worldmodel.Reading:
			b = head(b, "o", o.Seq, o.Time, o.Source)
			b = append(b, `,"v":`...)
			b = appendFloat(b, o.Value)
			if o.Unit != "" {
				b = append(b, `,"u":`...)
				b = appendJSON(b, o.Unit)
			}
		case worldmodel.Text:
			b = head(b, "x", o.Seq, o.Time, o.Source)
			b = append(b, `,"text":`...)
			b = appendJSON(b, o.Text)
		case worldmodel.EventRef:
			if o.Event == nil {
				return b
			}
			b = head(b, "oe", o.Seq, o.Time, o.Source)
			b = appendEvent(b, o.Event)
		default:
			return b
		}
	case worldmodel.ItemEvent:
		b = head(b, "e", it.Event.Seq, it.Event.Time, it.Event.Source)
		b = appendEvent(b, &it.Event)
	case worldmodel.ItemRecord:
		r := &it.Record
		b = head(b, "r", r.Seq, r.Time, r.Source)
		b = append(b, `,"kind":`...)
		b = appendJSON(b, r.Kind)
		b = append(b, `,"data":`...)
		b = appendRecordData(b, r.Data)
	default:
		return b
	}
	if rep != "" {
		b = append(b, `,"rep":`...)
		b = appendJSON(b, rep)
	}
	return append(b, '}')
}

// appendRecordData appends a record's data, its large fields replaced by
// {"omitted_bytes": n} when the whole is too big for the live channel.
func appendRecordData(b []byte, data json.RawMessage) []byte {
	if len(data) <= maxRecordData && json.Valid(data) {
		return append(b, data...)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		b = append(b, `{"omitted_bytes":`...)
		b = strconv.AppendInt(b, int64(len(data)), 10)
		return append(b, '}')
	}
	for k, v := range fields {
		if len(v) > maxFieldData {
			fields[k] = json.RawMessage(`{"omitted_bytes":` + strconv.Itoa(len(v)) + `}`)
		}
	}
	return appendJSON(b, fields)
}

func head(b []byte, typ string, seq uint64, t time.Time, src string) []byte {
	b = append(b, `{"t":"`...)
	b = append(b, typ...)
	b = append(b, `","seq":`...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, t.UnixMilli(), 10)
	b = append(b, `,"src":`...)
	return appendJSON(b, src)
}

func appendEvent(b []byte, e *worldmodel.Event) []byte {
	b = append(b, `,"kind":`...)
	b = appendJSON(b, e.Kind)
	b = append(b, `,"prio":"`...)
	b = append(b, e.Priority.String()...)
	b = append(b, `","msg":`...)
	b = appendJSON(b, e.Message)
	if len(e.Data) > 0 {
		b = append(b, `,"data":`...)
		b = appendJSON(b, e.Data)
	}
	return b
}

// appendJSON appends v encoded; a value that does not encode (a NaN in an
// event's data) becomes null rather than a broken message.
func appendJSON(b []byte, v any) []byte {
	j, err := json.Marshal(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, j...)
}

func appendFloat(b []byte, v float64) []byte {
	if v != v || v > 1e308 || v < -1e308 { // NaN and ±Inf are not JSON
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// keepalive is how often an idle live channel gets a comment, so proxies
// and the browser keep it open and a gone client is noticed.
const keepalive = 15 * time.Second

// writeTimeout bounds one write to a client: a client that stopped reading
// is let go rather than holding a goroutine.
const writeTimeout = 10 * time.Second

// handleLive is the Server-Sent Events channel.
func (s *server) handleLive(w http.ResponseWriter, r *http.Request, _ session) {
	c := s.hub.join()
	if c == nil {
		httpError(w, http.StatusServiceUnavailable, "too many live clients (dashboard.max_clients)")
		return
	}
	defer s.hub.leave(c)
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("retry: 2000\n\n")); err != nil || rc.Flush() != nil {
		return
	}
	// Wall time, not the agent's clock: keepalives and write deadlines are
	// about the network, which a replay's virtual clock does not drive.
	tick := clock.Real().NewTicker(keepalive)
	defer tick.Stop()
	var reported uint64
	for {
		var msg []byte
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-tick.C():
			msg = nil
		case msg = <-c.ch:
		}
		_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
		var err error
		if msg == nil {
			_, err = w.Write([]byte(": keepalive\n\n"))
		} else {
			// Tell the page what it lost, so it can say so.
			if d := c.dropped.Load(); d > reported {
				_, err = w.Write([]byte(`data: {"t":"dropped","n":` + strconv.FormatUint(d-reported, 10) + "}\n\n"))
				reported = d
			}
			if err == nil {
				_, err = w.Write(append(append([]byte("data: "), msg...), "\n\n"...))
			}
		}
		// Flush only when the queue is empty: a burst goes out in one write.
		if err == nil && len(c.ch) == 0 {
			err = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}
