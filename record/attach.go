package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

// The board's files in a recording file. Each one the board names is
// either attached (streamed from the disk into the file, never held whole
// in memory) or, beyond Options.AttachMaxBytes in all, carried by its
// SHA-256 only: a wake-word head or a labels file travels with the
// recording, a vision model of 200 MB does not, and a replay elsewhere
// takes a local copy only if its hash matches (package replay). Every file
// of a recording repeats them, so that each replays on its own; the
// hashes of files not attached are kept between files, so a big model is
// read once per recorder, not at every rotation.

// DefaultAttachMax is Options.AttachMaxBytes by default; MaxAttachMax is
// its upper bound, below what a recording's reader takes as one record.
const (
	DefaultAttachMax = 16 << 20
	MaxAttachMax     = 48 << 20
)

// MetaFileDetails names the metadata record that says, for each board file
// (by attachment name), a FileDetails as JSON.
const MetaFileDetails = "edgeagent.files.details"

// FileDetails is what a recording says of one of its board's files.
type FileDetails struct {
	Key      string `json:"key"` // the board setting that names it
	Bytes    int64  `json:"bytes"`
	SHA256   string `json:"sha256,omitempty"` // hex; "" when it could not be read
	Attached bool   `json:"attached"`
	// Why it is not attached: over the recording's budget for files,
	// unreadable, changed while it was being attached.
	Why string `json:"why,omitempty"`
}

// fileState is what a recorder keeps about the board's files from one
// recording file to the next: the hashes of the files it does not attach,
// and what it has told the user.
type fileState struct {
	log  *slog.Logger
	mu   sync.Mutex
	sums map[string]fileSum // path -> its hash at that size and time
	told map[string]bool    // path + why
	left []string           // the settings of the files the last recording file did not attach
}

type fileSum struct {
	size int64
	mod  time.Time
	sum  string
}

func newFileState(log *slog.Logger) *fileState {
	return &fileState{log: log, sums: map[string]fileSum{}, told: map[string]bool{}}
}

// sum is the SHA-256 of f (st its stat), read again only when its size or
// time changed since the last file.
func (s *fileState) sum(path string, f io.Reader, st os.FileInfo) (string, error) {
	if s != nil {
		s.mu.Lock()
		c, ok := s.sums[path]
		s.mu.Unlock()
		if ok && c.size == st.Size() && c.mod.Equal(st.ModTime()) {
			return c.sum, nil
		}
	}
	sum, err := sumOf(f)
	if err == nil {
		s.remember(path, st, sum)
	}
	return sum, err
}

// SumFile is the SHA-256 of the file at path, in hex, as FileDetails
// holds it.
func SumFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	return sumOf(f)
}

func sumOf(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (s *fileState) remember(path string, st os.FileInfo, sum string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.sums[path] = fileSum{size: st.Size(), mod: st.ModTime(), sum: sum}
	s.mu.Unlock()
}

// notAttached are the settings of the files the last recording file did
// not attach.
func (s *fileState) notAttached() []string {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.left)
}

func (s *fileState) setNotAttached(keys []string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.left = keys
	s.mu.Unlock()
}

// tell warns once per recorder that a file is not in the recording.
func (s *fileState) tell(a Attachment, d FileDetails) {
	if s == nil || s.log == nil {
		return
	}
	s.mu.Lock()
	first := !s.told[a.Path+"\x00"+d.Why]
	s.told[a.Path+"\x00"+d.Why] = true
	s.mu.Unlock()
	if !first {
		return
	}
	if d.SHA256 != "" {
		s.log.Warn("recorder: a file the board names is not attached, only its SHA-256: a replay on another machine needs the same file where the board names it"+
			" (record.attach_max_bytes raises the limit)", "setting", a.Key, "bytes", d.Bytes, "why", d.Why)
		return
	}
	s.log.Warn("recorder: a file the board names is not in the recording: a replay elsewhere will refuse to start without it",
		"setting", a.Key, "why", d.Why)
}

// attachFiles writes the board's files and what the recording says of
// them (MetaFiles, MetaFileDetails). An error is the recording file's own;
// a board file that cannot be read is left out and said so.
func (fl *file) attachFiles(now time.Time, files []Attachment, limit int64, st *fileState) error {
	from := make(map[string]string, len(files))
	details := make(map[string]string, len(files))
	left := limit
	var out []string
	for _, a := range files {
		d, err := fl.attachFile(now, a, &left, limit, st)
		if err != nil {
			return err
		}
		if !d.Attached {
			st.tell(a, d)
			out = append(out, a.Key)
		}
		b, _ := json.Marshal(d) // strings and numbers: always encodes
		from[a.Name], details[a.Name] = a.Path, string(b)
	}
	st.setNotAttached(out)
	// Where each came from: a replay maps a reloaded board's paths to
	// the files it unpacked, and looks there for those not attached.
	if err := fl.w.WriteMetadata(&mcap.Metadata{Name: MetaFiles, Metadata: from}); err != nil {
		return err
	}
	return fl.w.WriteMetadata(&mcap.Metadata{Name: MetaFileDetails, Metadata: details})
}

// attachFile attaches one board file if it fits in what is left, and
// hashes it either way.
func (fl *file) attachFile(now time.Time, a Attachment, left *int64, limit int64, st *fileState) (FileDetails, error) {
	d := FileDetails{Key: a.Key}
	f, err := os.Open(a.Path)
	if err != nil {
		d.Why = "unreadable when recorded"
		return d, nil
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		d.Why = "unreadable when recorded"
		return d, nil
	}
	d.Bytes = info.Size()
	if d.Bytes > *left {
		d.Why = fmt.Sprintf("over the %s of files a recording carries", sizeText(limit))
		if d.SHA256, err = st.sum(a.Path, f, info); err != nil {
			d.Why = "unreadable when recorded"
		}
		return d, nil
	}
	sum, short, err := fl.attachFrom(now, a.Name, f, d.Bytes)
	switch {
	case err != nil:
		return d, err
	case short:
		// Its record is whole (padded), but it is not the file: a replay
		// must not take it for one.
		d.Why = "changed while it was being attached"
		return d, nil
	}
	*left -= d.Bytes
	d.SHA256, d.Attached = sum, true
	st.remember(a.Path, info, sum)
	return d, nil
}

// attachFrom writes size bytes of r as the attachment name, streamed, and
// returns their SHA-256; short: r ended before size (the rest is zeros).
func (fl *file) attachFrom(now time.Time, name string, r io.Reader, size int64) (sum string, short bool, err error) {
	h := sha256.New()
	e := &exactly{r: io.TeeReader(io.LimitReader(r, size), h), n: size}
	t := uint64(now.UnixNano())
	err = fl.w.WriteAttachment(&mcap.Attachment{LogTime: t, CreateTime: t, Name: name,
		MediaType: "application/octet-stream", DataSize: uint64(size), Data: e})
	return hex.EncodeToString(h.Sum(nil)), e.short, err
}

// exactly reads n bytes from r, and zeros when r ends early (a file
// truncated while it is copied): the attachment's record keeps the
// length it announced, so the recording stays readable.
type exactly struct {
	r     io.Reader
	n     int64
	short bool
}

func (e *exactly) Read(p []byte) (int, error) {
	if e.n <= 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), e.n)]
	k, err := e.r.Read(p)
	if err == io.EOF { // before n: the file is shorter than it was
		err = nil
		if k == 0 {
			e.short = true
			clear(p)
			k = len(p)
		}
	}
	e.n -= int64(k)
	return k, err
}

func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
