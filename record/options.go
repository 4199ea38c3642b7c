package record

import (
	"errors"
	"fmt"
	"time"
)

// Options are the board's `record:` section. Zero fields take the defaults
// of DefaultOptions.
type Options struct {
	// Enabled records from the start into Dir. Without it the recorder
	// waits for `run --record FILE` or the record.start tool.
	Enabled bool `yaml:"enabled"`
	// Dir holds the rotated files, relative to data_dir (default
	// "recordings").
	Dir string `yaml:"dir"`
	// MaxBytes and MaxAge start a new file in Dir; Keep is how many files
	// Dir keeps (the oldest are deleted). A single file named by --record
	// or record.start {file} is never rotated.
	MaxBytes int64         `yaml:"max_bytes"`
	MaxAge   time.Duration `yaml:"max_age"`
	Keep     int           `yaml:"keep"`
	// Compression of the chunks: lz4 (less memory and CPU) or zstd
	// (smaller files).
	Compression string `yaml:"compression"`
	// ChunkBytes closes a chunk at this uncompressed size; FlushEvery closes
	// it after this long at the latest. A power cut loses at most the
	// chunk being filled.
	ChunkBytes int64         `yaml:"chunk_bytes"`
	FlushEvery time.Duration `yaml:"flush_every"`
	// Queue bounds what waits for the disk, in messages and bytes; beyond
	// it messages are dropped and counted, the agent never waits.
	Queue      int   `yaml:"queue"`
	QueueBytes int64 `yaml:"queue_bytes"`
	// Frames decides which camera snapshots are kept.
	Frames FrameOptions `yaml:"frames"`
	// Audio records each microphone's audio around speech (its VAD opens
	// and closes it; <mic>.audio in the world model, produced only while
	// the recorder watches it), at 32 KB per second of speech. Off by
	// default: it is what people in the room said.
	Audio bool `yaml:"audio"`
	// Retry is how long a recorder whose disk failed (full, read-only,
	// gone) waits before it tries a new file.
	Retry time.Duration `yaml:"retry"`
	// AttachMaxBytes bounds the board's files each recording file carries,
	// in all (default 16 MiB, so that a file rotated every hour stays
	// within the recorder's 60 MB/h with the sim board's ~40 MB/h of
	// messages). A file beyond it is carried by its SHA-256 only; 0
	// attaches none.
	AttachMaxBytes int64 `yaml:"attach_max_bytes"`
}

// FrameOptions: every snapshot while the camera sees motion, one per
// Interval otherwise, re-encoded at most MaxWidth wide at Quality (0: kept
// as the camera encoded them).
type FrameOptions struct {
	Enabled  bool          `yaml:"enabled"`
	Interval time.Duration `yaml:"interval"`
	Motion   bool          `yaml:"motion"` // every snapshot during motion
	MaxWidth int           `yaml:"max_width"`
	Quality  int           `yaml:"quality"`
}

// DefaultOptions are what an empty `record:` section means.
func DefaultOptions() Options {
	return Options{
		Dir: "recordings", MaxBytes: 256 << 20, MaxAge: time.Hour, Keep: 24,
		Compression: "lz4", ChunkBytes: 128 << 10, FlushEvery: 5 * time.Second,
		Queue: 4096, QueueBytes: 512 << 10, Retry: 30 * time.Second, AttachMaxBytes: DefaultAttachMax,
		Frames: FrameOptions{Enabled: true, Interval: time.Second, Motion: true, MaxWidth: 320, Quality: 60},
	}
}

func (o Options) validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("record."+format, args...)) }
	if o.Compression != "lz4" && o.Compression != "zstd" {
		bad("compression: want lz4 or zstd")
	}
	if o.MaxBytes < 1<<20 {
		bad("max_bytes: want ≥ 1048576")
	}
	if o.MaxAge < time.Minute {
		bad("max_age: want ≥ 1m")
	}
	if o.Keep < 1 {
		bad("keep: want ≥ 1")
	}
	if o.ChunkBytes < 4<<10 || o.ChunkBytes > 64<<20 {
		bad("chunk_bytes: want 4096..67108864")
	}
	if o.FlushEvery < 100*time.Millisecond {
		bad("flush_every: want ≥ 100ms")
	}
	if o.Queue < 16 {
		bad("queue: want ≥ 16")
	}
	if o.QueueBytes < 64<<10 {
		bad("queue_bytes: want ≥ 65536")
	}
	if o.Frames.Interval < 0 {
		bad("frames.interval: want ≥ 0")
	}
	if o.Frames.MaxWidth < 0 {
		bad("frames.max_width: want ≥ 0 (0 keeps frames as they are)")
	}
	if o.Frames.MaxWidth > 0 && (o.Frames.Quality < 1 || o.Frames.Quality > 100) {
		bad("frames.quality: want 1..100")
	}
	if o.Retry < time.Second {
		bad("retry: want ≥ 1s")
	}
	if o.AttachMaxBytes < 0 || o.AttachMaxBytes > MaxAttachMax {
		bad("attach_max_bytes: want 0..%d", int64(MaxAttachMax))
	}
	if o.Dir == "" {
		bad("dir: must not be empty")
	}
	return errors.Join(errs...)
}
