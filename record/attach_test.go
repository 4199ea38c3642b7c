package record

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/record/recording"
)

// writeFiles makes board files of these sizes (distinct bytes) in a
// folder and returns them as the board would name them.
func writeFiles(t *testing.T, sizes ...int) []Attachment {
	t.Helper()
	dir := t.TempDir()
	var out []Attachment
	for i, n := range sizes {
		p := filepath.Join(dir, "f"+string(rune('a'+i))+".bin")
		if err := os.WriteFile(p, bytes.Repeat([]byte{byte('a' + i)}, n), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, Attachment{Name: FilesPrefix + string(rune('1'+i)) + "/" + filepath.Base(p), Path: p, Key: "sensors[" + string(rune('0'+i)) + "].options.model"})
	}
	return out
}

// writeRecording writes one recording file as the recorder starts one.
func writeRecording(t *testing.T, h Header) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "r.mcap")
	fl, err := createFile(path, testOptions(), h, t0)
	if err != nil {
		t.Fatal(err)
	}
	if err := fl.close(map[string]string{}); err != nil {
		t.Fatal(err)
	}
	return path
}

func details(t *testing.T, in *recording.Info) map[string]FileDetails {
	t.Helper()
	out := map[string]FileDetails{}
	for name, s := range in.Meta[MetaFileDetails] {
		var d FileDetails
		if err := json.Unmarshal([]byte(s), &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = d
	}
	return out
}

func sumText(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// Files are attached in the board's order while they fit in
// attach_max_bytes; one that does not is carried by its SHA-256, and the
// recorder says so once, naming the setting, however many files it
// writes. Its hash is not read again while the file is unchanged.
func TestFilesOverTheLimitAreHashed(t *testing.T) {
	files := writeFiles(t, 100, 2048, 900)
	var log bytes.Buffer
	st := newFileState(slog.New(slog.NewTextHandler(&log, nil)))
	h := Header{Board: []byte("device: {id: bot, platform: sim}\n"), Files: files, AttachMax: 1024, files: st}
	in, err := recording.Read(writeRecording(t, h), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := details(t, in)
	big, _ := os.ReadFile(files[1].Path)
	if a := d[files[0].Name]; !a.Attached || a.Bytes != 100 || a.Key != files[0].Key || in.Attached[files[0].Name] != 100 {
		t.Errorf("the first small file: %+v, attached %d bytes", a, in.Attached[files[0].Name])
	}
	if b := d[files[1].Name]; b.Attached || b.SHA256 != sumText(big) || b.Bytes != 2048 || !strings.Contains(b.Why, "over the 1.0 KiB") {
		t.Errorf("the big file: %+v", b)
	}
	if _, ok := in.Attached[files[1].Name]; ok {
		t.Error("the big file's bytes are in the recording")
	}
	if c := d[files[2].Name]; !c.Attached || in.Meta[MetaFiles][files[2].Name] != files[2].Path {
		t.Errorf("the small file after it (fits in what is left): %+v", c)
	}
	// The next file: told already. Same size and time, other bytes: the
	// hash kept is used, the file is not read again.
	info, _ := os.Stat(files[1].Path)
	if err := os.WriteFile(files[1].Path, bytes.Repeat([]byte{'z'}, 2048), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(files[1].Path, info.ModTime(), info.ModTime()); err != nil {
		t.Fatal(err)
	}
	in2, err := recording.Read(writeRecording(t, h), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := details(t, in2)[files[1].Name].SHA256; got != sumText(big) {
		t.Errorf("the second file's hash %s, want the one kept %s", got, sumText(big))
	}
	if got := st.notAttached(); len(got) != 1 || got[0] != files[1].Key {
		t.Errorf("the status's files not attached: %v", got)
	}
	if n := strings.Count(log.String(), "not attached"); n != 1 || !strings.Contains(log.String(), "setting=sensors[1].options.model") ||
		!strings.Contains(log.String(), "attach_max_bytes") || strings.Contains(log.String(), "zzz") {
		t.Errorf("want one warning naming the setting:\n%s", log.String())
	}
	// Attach nothing: every file by its hash.
	h.AttachMax = 0
	in3, err := recording.Read(writeRecording(t, h), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range files {
		if d := details(t, in3)[a.Name]; d.Attached || d.SHA256 == "" {
			t.Errorf("attach_max_bytes 0: %s %+v", a.Name, d)
		}
	}
}

// A board file is streamed into the recording and out of it again, not
// read whole into memory: attaching and extracting 24 MiB allocates a
// small fraction of that.
func TestAttachmentsAreStreamed(t *testing.T) {
	files := writeFiles(t, 24<<20)
	h := Header{Board: []byte("device: {id: bot, platform: sim}\n"), Files: files, AttachMax: MaxAttachMax}
	allocated := func(fn func()) uint64 {
		var a, b runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&a)
		fn()
		runtime.ReadMemStats(&b)
		return b.TotalAlloc - a.TotalAlloc
	}
	var path string
	if n := allocated(func() { path = writeRecording(t, h) }); n > 4<<20 {
		t.Errorf("attaching 24 MiB allocated %d bytes", n)
	}
	out := filepath.Join(t.TempDir(), "out.bin")
	var err error
	if n := allocated(func() { err = recording.Extract(path, map[string]string{files[0].Name: out}) }); err != nil || n > 4<<20 {
		t.Errorf("extracting 24 MiB: %v, allocated %d bytes", err, n)
	}
	got, _ := SumFile(out)
	want, _ := SumFile(files[0].Path)
	if got != want {
		t.Error("the extracted file is not the board's")
	}
	// A recording's reader keeps it out of memory too, and lists it.
	in, err := recording.Read(path, nil)
	if err != nil || in.Attached[files[0].Name] != 24<<20 || in.Attachments[files[0].Name] != nil {
		t.Errorf("read: %v, listed %d bytes, in memory %d", err, in.Attached[files[0].Name], len(in.Attachments[files[0].Name]))
	}
}

// A file cut short while it is attached leaves a readable recording whose
// details say the attachment is not the file.
func TestFileCutShortWhileAttached(t *testing.T) {
	e := &exactly{r: strings.NewReader("abc"), n: 8}
	b, err := io.ReadAll(e)
	if err != nil || string(b) != "abc\x00\x00\x00\x00\x00" || !e.short {
		t.Fatalf("read %q, %v, short %v", b, err, e.short)
	}
	e = &exactly{r: strings.NewReader("abcdefgh"), n: 8}
	if b, _ := io.ReadAll(e); string(b) != "abcdefgh" || e.short {
		t.Fatalf("a whole file: %q short %v", b, e.short)
	}
	// Through a recording file: a reader that ends early.
	files := writeFiles(t, 100)
	path := filepath.Join(t.TempDir(), "r.mcap")
	fl, err := createFile(path, testOptions(), Header{Board: []byte("x: 1\n")}, t0)
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(files[0].Path)
	defer f.Close()
	if _, short, err := fl.attachFrom(t0, files[0].Name, io.LimitReader(f, 40), 100); err != nil || !short {
		t.Fatalf("short %v, %v", short, err)
	}
	if err := fl.close(nil); err != nil {
		t.Fatal(err)
	}
	if in, err := recording.Read(path, nil); err != nil || !in.Complete || in.Attached[files[0].Name] != 100 {
		t.Fatalf("the recording after it: %v %+v", err, in)
	}
}
