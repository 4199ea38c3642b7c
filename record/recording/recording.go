// Package recording reads the MCAP files the recorder writes: their
// channels, counts, times, metadata and board, and their messages in file
// order. A file cut short (a power cut, a full disk, a crash) is read up to
// its last complete chunk and reported as truncated, not refused.
package recording

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

// Limits against hostile or corrupt files: the recorder's chunks are far
// smaller. Attachments up to maxAttachment (the board, small files) are
// kept in memory; bigger ones are listed, and Extract streams them out.
const (
	maxRecord     = 64 << 20
	maxChunk      = 256 << 20
	maxAttachment = 1 << 20
)

// Channel is one channel of a recording with what was read of it.
type Channel struct {
	ID       uint16
	Topic    string
	Schema   string
	Encoding string
	Kind     string // the recorder's channel kind: observation, event, record, image, annotations, stats
	Source   string
	Count    uint64
	Bytes    uint64
	First    time.Time
	Last     time.Time
}

// Info is what a pass over a recording found.
type Info struct {
	Path     string
	Size     int64
	Channels []*Channel // by topic, then schema
	Messages uint64
	Start    time.Time
	End      time.Time
	// Meta are the metadata records by name: "edgeagent" (build, device),
	// "edgeagent.recorder" (the counters at close).
	Meta map[string]map[string]string
	// Attachments by name ("board.yaml"), those up to 1 MiB; Attached
	// lists every attachment with its size (Extract reads any of them).
	Attachments map[string][]byte
	Attached    map[string]uint64
	// Complete: the file ends with its summary and footer. Otherwise it was
	// cut short and Damage says where reading stopped and why.
	Complete bool
	Damage   string
	// Stats are the recorder's counters: the final ones for a complete
	// file, the last flushed ones for a truncated file.
	Stats map[string]uint64
}

// Duration is the time between the first and the last message.
func (in *Info) Duration() time.Duration { return in.End.Sub(in.Start) }

// Channel returns the channel with this topic (the first, if several
// schemas share it).
func (in *Info) Channel(topic string) *Channel {
	for _, c := range in.Channels {
		if c.Topic == topic {
			return c
		}
	}
	return nil
}

// Msg is one message, in file order. Data is valid only during the call.
type Msg struct {
	Channel *Channel
	Time    time.Time
	Seq     uint32
	Data    []byte
}

// ErrStop ends Read early from inside fn without an error.
var ErrStop = errors.New("stop reading")

// Read passes over the file once, calling fn (when not nil) for every
// message, and returns what it found. An error from fn other than ErrStop
// ends the pass and is returned.
func Read(path string, fn func(Msg) error) (*Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	in := &Info{Path: path, Size: st.Size(), Meta: map[string]map[string]string{}, Attachments: map[string][]byte{}, Attached: map[string]uint64{}}
	lx, err := mcap.NewLexer(f, &mcap.LexerOptions{
		MaxRecordSize: maxRecord, MaxDecompressedChunkSize: maxChunk, ValidateChunkCRCs: true,
		AttachmentCallback: func(a *mcap.AttachmentReader) error {
			in.Attached[a.Name] = a.DataSize
			if a.DataSize > maxAttachment {
				return nil
			}
			data, err := io.ReadAll(a.Data())
			if err == nil {
				in.Attachments[a.Name] = data
			}
			return nil // a damaged attachment is the damage the lexer reports next
		},
	})
	if err != nil {
		return nil, describe(path, err)
	}
	r := reader{in: in, fn: fn, byID: map[uint16]*Channel{}, schemas: map[uint16]string{}}
	err = r.run(lx)
	if errors.Is(err, ErrStop) {
		err = nil
	}
	slices.SortFunc(in.Channels, func(a, b *Channel) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		if a.Schema < b.Schema {
			return -1
		}
		return 0
	})
	if final := in.Meta["edgeagent.recorder"]; final != nil {
		in.Stats = map[string]uint64{}
		for k, v := range final {
			if n, perr := strconv.ParseUint(v, 10, 64); perr == nil {
				in.Stats[k] = n
			}
		}
	}
	return in, err
}

// describe words an open error without quoting the file (the magic error
// of the mcap package prints the bytes it found).
func describe(path string, err error) error {
	var magic *mcap.ErrBadMagic
	if errors.As(err, &magic) {
		return fmt.Errorf("%s: not an MCAP file", path)
	}
	return fmt.Errorf("%s: %w", path, err)
}

type reader struct {
	in      *Info
	fn      func(Msg) error
	byID    map[uint16]*Channel
	schemas map[uint16]string
	offset  int64
}

func (r *reader) run(lx *mcap.Lexer) error {
	in := r.in
	var buf []byte
	for {
		tok, rec, err := lx.Next(buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if !in.Complete {
					in.Damage = "the file ends without its summary (the recorder did not close it)"
				}
				return nil
			}
			var magic *mcap.ErrBadMagic
			if errors.As(err, &magic) && in.Messages == 0 && len(r.byID) == 0 {
				return describe(in.Path, err)
			}
			in.Complete = false
			in.Damage = fmt.Sprintf("read up to the last complete chunk, then: %v", damage(err))
			return nil
		}
		if cap(rec) > cap(buf) {
			buf = rec
		}
		switch tok {
		case mcap.TokenSchema:
			s, err := mcap.ParseSchema(rec)
			if err != nil {
				return r.bad(err)
			}
			r.schemas[s.ID] = s.Name
		case mcap.TokenChannel:
			c, err := mcap.ParseChannel(rec)
			if err != nil {
				return r.bad(err)
			}
			if _, dup := r.byID[c.ID]; dup { // the summary repeats the channels
				continue
			}
			ch := &Channel{ID: c.ID, Topic: c.Topic, Schema: r.schemas[c.SchemaID], Encoding: c.MessageEncoding,
				Kind: c.Metadata["kind"], Source: c.Metadata["source"]}
			r.byID[c.ID] = ch
			in.Channels = append(in.Channels, ch)
		case mcap.TokenMessage:
			m, err := mcap.ParseMessage(rec)
			if err != nil {
				return r.bad(err)
			}
			if err := r.message(m); err != nil {
				return err
			}
		case mcap.TokenMetadata:
			m, err := mcap.ParseMetadata(rec)
			if err != nil {
				return r.bad(err)
			}
			in.Meta[m.Name] = m.Metadata
		case mcap.TokenFooter:
			in.Complete, in.Damage = true, ""
		}
	}
}

func (r *reader) message(m *mcap.Message) error {
	in := r.in
	ch := r.byID[m.ChannelID]
	if ch == nil {
		in.Damage = fmt.Sprintf("a message on channel %d, which was never declared", m.ChannelID)
		return nil
	}
	t := time.Unix(0, int64(m.LogTime))
	ch.Count++
	ch.Bytes += uint64(len(m.Data))
	if ch.First.IsZero() || t.Before(ch.First) {
		ch.First = t
	}
	if t.After(ch.Last) {
		ch.Last = t
	}
	in.Messages++
	if in.Start.IsZero() || t.Before(in.Start) {
		in.Start = t
	}
	if t.After(in.End) {
		in.End = t
	}
	if ch.Kind == "stats" { // the latest counters, for a file cut short
		var st map[string]uint64
		if json.Unmarshal(m.Data, &st) == nil {
			in.Stats = st
		}
	}
	if r.fn == nil {
		return nil
	}
	return r.fn(Msg{Channel: ch, Time: t, Seq: m.Sequence, Data: m.Data})
}

func (r *reader) bad(err error) error {
	r.in.Damage = "a malformed record: " + damage(err)
	return nil
}

// damage names a read error without quoting file bytes.
func damage(err error) string {
	var magic *mcap.ErrBadMagic
	var trunc *mcap.ErrTruncatedRecord
	switch {
	case errors.As(err, &magic):
		return "bad magic bytes"
	case errors.As(err, &trunc), errors.Is(err, io.ErrUnexpectedEOF):
		return "a record cut short"
	}
	return err.Error()
}
