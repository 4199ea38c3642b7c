package wyoming

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// Audio format we send: what the sources deliver.
const (
	rate     = 16000
	width    = 2
	channels = 1
)

// Conn is one connection to a Wyoming server. Reads and writes may happen
// from different goroutines; writes are serialised.
type Conn struct {
	c   net.Conn
	r   *bufio.Reader
	wmu sync.Mutex
	buf []byte
}

// Dial connects to addr: "host:port" or "tcp://host:port" (the form Home
// Assistant shows), or "unix:///path".
func Dial(ctx context.Context, addr string) (*Conn, error) {
	network, a := "tcp", addr
	switch {
	case strings.HasPrefix(addr, "tcp://"):
		a = strings.TrimPrefix(addr, "tcp://")
	case strings.HasPrefix(addr, "unix://"):
		network, a = "unix", strings.TrimPrefix(addr, "unix://")
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, network, a)
	if err != nil {
		return nil, fmt.Errorf("wyoming: %w", err)
	}
	return &Conn{c: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// Close closes the connection; a blocked Read returns.
func (c *Conn) Close() error { return c.c.Close() }

// Write sends one event.
func (c *Conn) Write(e Event) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	var err error
	c.buf, err = AppendEvent(c.buf[:0], e)
	if err != nil {
		return err
	}
	// A server that stops reading must not block the audio path forever.
	c.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err = c.c.Write(c.buf)
	return err
}

// Read receives one event.
func (c *Conn) Read() (Event, error) { return ReadEvent(c.r) }

// watch closes the connection when ctx ends, so blocking reads return.
// The returned stop function ends the watch.
func (c *Conn) watch(ctx context.Context) (stop func() bool) {
	return context.AfterFunc(ctx, func() { c.c.Close() })
}

// Program describes one service in an info event.
type Program struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Installed   bool    `json:"installed"`
	Version     string  `json:"version"`
	Models      []Model `json:"models"`
}

// Model is one model of a service.
type Model struct {
	Name      string   `json:"name"`
	Languages []string `json:"languages"`
	Phrase    string   `json:"phrase"` // wake models
	Installed bool     `json:"installed"`
}

// Info is the answer to describe.
type Info struct {
	ASR  []Program `json:"asr"`
	Wake []Program `json:"wake"`
	TTS  []Program `json:"tts"`
}

// Describe asks the server at addr what it offers.
func Describe(ctx context.Context, addr string) (Info, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return Info{}, err
	}
	defer c.Close()
	defer c.watch(ctx)()
	if err := c.Write(Event{Type: "describe"}); err != nil {
		return Info{}, err
	}
	for {
		e, err := c.Read()
		if err != nil {
			return Info{}, ctxErr(ctx, err)
		}
		if e.Type != "info" {
			continue // servers may send other events first; they are not ours
		}
		var info Info
		b, _ := json.Marshal(e.Data)
		if err := json.Unmarshal(b, &info); err != nil {
			return Info{}, fmt.Errorf("wyoming: info: %w", err)
		}
		return info, nil
	}
}

func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// audioChunk encodes samples as an audio-chunk event.
func audioChunk(samples []int16, tsMillis int64) Event {
	p := make([]byte, 2*len(samples))
	for i, s := range samples {
		binary.LittleEndian.PutUint16(p[2*i:], uint16(s))
	}
	return Event{Type: "audio-chunk", Data: map[string]any{
		"rate": rate, "width": width, "channels": channels, "timestamp": tsMillis,
	}, Payload: p}
}

func audioStart() Event {
	return Event{Type: "audio-start", Data: map[string]any{
		"rate": rate, "width": width, "channels": channels, "timestamp": 0,
	}}
}

// ErrServer is wrapped around error events a server sends.
var ErrServer = errors.New("wyoming server error")

func serverError(e Event) error {
	msg := e.String("text")
	if msg == "" {
		msg = e.String("message")
	}
	return fmt.Errorf("%w: %s (code %s)", ErrServer, msg, e.String("code"))
}

// Transcription streams one utterance to a speech-to-text server.
type Transcription struct {
	c       *Conn
	samples int64
	unwatch func() bool
}

// StartTranscription connects and announces an utterance. model and
// language may be empty (the server's defaults). ctx bounds the whole
// utterance: when it ends the connection is closed, so a Write blocked on a
// stalled server returns at once instead of after its write deadline.
func StartTranscription(ctx context.Context, addr, model, language string) (*Transcription, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	unwatch := c.watch(ctx)
	fail := func(err error) (*Transcription, error) {
		unwatch()
		c.Close()
		return nil, ctxErr(ctx, err)
	}
	data := map[string]any{}
	if model != "" {
		data["name"] = model
	}
	if language != "" {
		data["language"] = language
	}
	if err := c.Write(Event{Type: "transcribe", Data: data}); err != nil {
		return fail(err)
	}
	if err := c.Write(audioStart()); err != nil {
		return fail(err)
	}
	return &Transcription{c: c, unwatch: unwatch}, nil
}

// Write sends 16 kHz mono samples.
func (t *Transcription) Write(samples []int16) error {
	if len(samples) == 0 {
		return nil
	}
	err := t.c.Write(audioChunk(samples, t.samples*1000/rate))
	t.samples += int64(len(samples))
	return err
}

// Finish ends the utterance and waits for the transcript.
func (t *Transcription) Finish(ctx context.Context) (string, error) {
	defer t.unwatch()
	defer t.c.Close()
	if err := ctx.Err(); err != nil {
		// The watch below closes the connection from another goroutine:
		// without this check a fast server could still answer first.
		return "", err
	}
	defer t.c.watch(ctx)()
	if err := t.c.Write(Event{Type: "audio-stop", Data: map[string]any{"timestamp": t.samples * 1000 / rate}}); err != nil {
		return "", err
	}
	for {
		e, err := t.c.Read()
		if err != nil {
			return "", ctxErr(ctx, err)
		}
		switch e.Type {
		case "transcript":
			return strings.TrimSpace(e.String("text")), nil
		case "error":
			return "", serverError(e)
		}
		// transcript-start / transcript-chunk (streaming servers) and
		// anything else: the final transcript follows.
	}
}

// Abort drops the utterance.
func (t *Transcription) Abort() {
	t.unwatch()
	t.c.Close()
}

// Transcribe sends a whole utterance and returns its transcript.
func Transcribe(ctx context.Context, addr, model, language string, samples []int16) (string, error) {
	t, err := StartTranscription(ctx, addr, model, language)
	if err != nil {
		return "", err
	}
	for i := 0; i < len(samples); i += 1600 { // 100 ms chunks
		if err := t.Write(samples[i:min(len(samples), i+1600)]); err != nil {
			t.Abort()
			return "", err
		}
	}
	return t.Finish(ctx)
}

// Detection is a wake word reported by a server.
type Detection struct {
	Name      string
	Timestamp time.Duration // into the stream, as the server reports it
}

// WakeStream streams audio to a wake-word server and delivers its
// detections.
type WakeStream struct {
	c       *Conn
	unwatch func() bool
	samples int64
	det     chan Detection
	done    chan struct{}
	err     error
}

// StartWake connects, asks for the given wake words (all the server has
// when names is empty) and opens an audio stream. ctx bounds the stream:
// when it ends the connection is closed, so nothing waits on a stalled
// server.
func StartWake(ctx context.Context, addr string, names []string) (*WakeStream, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	unwatch := c.watch(ctx)
	data := map[string]any{}
	if len(names) > 0 {
		data["names"] = names
	}
	for _, e := range []Event{{Type: "detect", Data: data}, audioStart()} {
		if err := c.Write(e); err != nil {
			unwatch()
			c.Close()
			return nil, ctxErr(ctx, err)
		}
	}
	w := &WakeStream{c: c, unwatch: unwatch, det: make(chan Detection, 8), done: make(chan struct{})}
	go w.readLoop()
	return w, nil
}

func (w *WakeStream) readLoop() {
	defer close(w.done)
	defer close(w.det)
	for {
		e, err := w.c.Read()
		if err != nil {
			w.err = err
			return
		}
		switch e.Type {
		case "detection":
			ts, _ := e.Int("timestamp")
			select {
			case w.det <- Detection{Name: e.String("name"), Timestamp: time.Duration(ts) * time.Millisecond}:
			default: // nobody is reading: a stale detection is worthless
			}
		case "not-detected":
			w.err = errNotDetected
			return
		case "error":
			w.err = serverError(e)
			return
		}
	}
}

var errNotDetected = errors.New("wyoming: stream ended without detection")

// Write sends 16 kHz mono samples.
func (w *WakeStream) Write(samples []int16) error {
	select {
	case <-w.done:
		return w.Err()
	default:
	}
	err := w.c.Write(audioChunk(samples, w.samples*1000/rate))
	w.samples += int64(len(samples))
	return err
}

// Detections delivers detections; it is closed when the stream ends.
func (w *WakeStream) Detections() <-chan Detection { return w.det }

// Err is why the stream ended (nil while it runs).
func (w *WakeStream) Err() error {
	select {
	case <-w.done:
		if w.err == nil {
			return errors.New("wyoming: stream closed")
		}
		return w.err
	default:
		return nil
	}
}

// Close ends the stream: audio-stop, then the connection closes.
func (w *WakeStream) Close() error {
	defer w.unwatch()
	w.c.Write(Event{Type: "audio-stop", Data: map[string]any{"timestamp": w.samples * 1000 / rate}})
	err := w.c.Close()
	<-w.done
	return err
}
