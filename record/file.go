package record

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"time"

	"github.com/foxglove/mcap/go/mcap"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// Header is what every file starts with besides its messages: who wrote it
// (metadata "edgeagent") and the board it ran (attachment "board.yaml").
type Header struct {
	Meta  map[string]string
	Board []byte // the effective board config as YAML; nil leaves it out
	// Files are the files the board names (see BoardFiles), attached
	// under their names up to AttachMax bytes in all (attach.go).
	Files     []Attachment
	AttachMax int64
	files     *fileState // the recorder's, kept from one file to the next
}

// Names of the metadata records and attachments of a recording.
const (
	MetaBuild    = "edgeagent"          // version, revision, go, device …
	MetaRecorder = "edgeagent.recorder" // written at close: written, dropped, missed
	BoardFile    = "board.yaml"
	MetaFiles    = "edgeagent.files" // attachment name -> the path it was read from (MetaFileDetails: the rest)
)

// file is one MCAP file being written: chunked and compressed, one channel
// per topic and schema, each schema written once.
//
// A chunk reaches the disk when it is full or when flush is called; the
// data section is readable up to the last complete chunk, so a power cut
// loses at most the chunk being filled (a test truncates files to check).
type file struct {
	path     string
	f        *os.File
	buf      *bufio.Writer
	w        *mcap.Writer
	opts     *mcap.WriterOptions
	chunk    int64
	schemas  map[string]uint16
	channels map[[2]string]uint16 // {topic, schema} -> id
	opened   time.Time
	msgs     uint64
}

func createFile(path string, o Options, h Header, now time.Time) (*file, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	comp, err := compressor(o.Compression)
	if err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	fl := &file{path: path, f: f, buf: bufio.NewWriterSize(f, 16<<10), chunk: o.ChunkBytes,
		schemas: map[string]uint16{}, channels: map[[2]string]uint16{}, opened: now}
	// The writer keeps opts by pointer and compares ChunkSize at every
	// message: flush relies on that (TestFlushWritesChunk guards it).
	fl.opts = &mcap.WriterOptions{Chunked: true, ChunkSize: o.ChunkBytes, Compressor: comp, IncludeCRC: true}
	fail := func(err error) (*file, error) {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	if fl.w, err = mcap.NewWriter(fl.buf, fl.opts); err != nil {
		return fail(err)
	}
	if err := fl.w.WriteHeader(&mcap.Header{Profile: "", Library: "edgeagent"}); err != nil {
		return fail(err)
	}
	if err := fl.w.WriteMetadata(&mcap.Metadata{Name: MetaBuild, Metadata: h.Meta}); err != nil {
		return fail(err)
	}
	if len(h.Board) > 0 {
		t := uint64(now.UnixNano())
		if err := fl.w.WriteAttachment(&mcap.Attachment{LogTime: t, CreateTime: t, Name: BoardFile,
			MediaType: "application/yaml", DataSize: uint64(len(h.Board)), Data: bytes.NewReader(h.Board)}); err != nil {
			return fail(err)
		}
	}
	if len(h.Files) > 0 {
		if err := fl.attachFiles(now, h.Files, h.AttachMax, h.files); err != nil {
			return fail(err)
		}
	}
	if err := fl.sync(); err != nil {
		return fail(err)
	}
	return fl, nil
}

// compressor makes the chunk compressor with small buffers: the library's
// defaults (4 MiB lz4 blocks, a zstd encoder per core with an 8 MiB window)
// would cost more memory than the whole recording budget of 2 MB. Chunks
// are far smaller than either, so nothing is lost.
func compressor(name string) (mcap.CustomCompressor, error) {
	if name == "zstd" {
		zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(256<<10), zstd.WithLowerEncoderMem(true))
		if err != nil {
			return nil, err
		}
		return mcap.NewCustomCompressor(mcap.CompressionZSTD, zw), nil
	}
	lw := lz4.NewWriter(nil)
	if err := lw.Apply(lz4.BlockSizeOption(lz4.Block64Kb), lz4.ConcurrencyOption(1), lz4.CompressionLevelOption(lz4.Fast)); err != nil {
		return nil, err
	}
	return mcap.NewCustomCompressor(mcap.CompressionLZ4, lw), nil
}

// write adds one message; a chunk it completes goes to the disk.
func (fl *file) write(m *Message) error {
	id, err := fl.channel(m)
	if err != nil {
		return err
	}
	before := fl.w.Offset()
	t := uint64(m.Time.UnixNano())
	if err := fl.w.WriteMessage(&mcap.Message{ChannelID: id, Sequence: uint32(m.Seq), LogTime: t, PublishTime: t, Data: m.Data}); err != nil {
		return err
	}
	fl.msgs++
	if fl.w.Offset() != before { // a chunk was completed
		return fl.buf.Flush()
	}
	return nil
}

func (fl *file) channel(m *Message) (uint16, error) {
	key := [2]string{m.Topic, m.Schema}
	if id, ok := fl.channels[key]; ok {
		return id, nil
	}
	if len(fl.channels) >= 65535 {
		return 0, fmt.Errorf("more than 65535 channels")
	}
	sid, ok := fl.schemas[m.Schema]
	if !ok {
		sid = uint16(len(fl.schemas) + 1)
		if err := fl.w.WriteSchema(&mcap.Schema{ID: sid, Name: m.Schema, Encoding: "jsonschema", Data: []byte(schemas[m.Schema])}); err != nil {
			return 0, err
		}
		fl.schemas[m.Schema] = sid
	}
	id := uint16(len(fl.channels) + 1)
	if err := fl.w.WriteChannel(&mcap.Channel{ID: id, SchemaID: sid, Topic: m.Topic, MessageEncoding: "json",
		Metadata: map[string]string{"kind": m.Kind, "source": m.Source}}); err != nil {
		return 0, err
	}
	fl.channels[key] = id
	return id, nil
}

// flush writes m (the recorder's counters) as the last message of the
// chunk being filled, closes that chunk and syncs the file, so what was
// recorded so far survives a power cut.
func (fl *file) flush(m *Message) error {
	fl.opts.ChunkSize = 0
	err := fl.write(m)
	fl.opts.ChunkSize = fl.chunk
	if err != nil {
		return err
	}
	return fl.sync()
}

func (fl *file) sync() error {
	if err := fl.buf.Flush(); err != nil {
		return err
	}
	return fl.f.Sync()
}

// size is how many bytes the file has (or will have once buffered bytes
// are written), not counting the chunk being filled.
func (fl *file) size() int64 { return int64(fl.w.Offset()) }

// close writes the recorder's final counters as metadata and the summary
// (index, statistics) and closes the file.
func (fl *file) close(final map[string]string) error {
	err := fl.w.WriteMetadata(&mcap.Metadata{Name: MetaRecorder, Metadata: final})
	if err == nil {
		err = fl.w.Close()
	}
	if err == nil {
		err = fl.sync()
	}
	if cerr := fl.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// abandon closes a file whose disk failed, keeping what reached it.
func (fl *file) abandon() { _ = fl.f.Close() }
