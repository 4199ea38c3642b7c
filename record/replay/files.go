package replay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
)

// boardFiles are the files of the board a recording carries
// (record.BoardFiles), unpacked for the replay.
type boardFiles struct {
	dir string // where they are unpacked: the recorded board's folder
	// from maps the path each was read from when it was recorded to where
	// it is unpacked.
	from map[string]string
}

// readBoard takes the board from the options or the recording, and
// unpacks the files the recording carries into dir. The recorded board
// names them from dir; a board given instead (and a reloaded one) gets
// them where it names a file that is not there.
func readBoard(path string, o *Options, dir string) (*recording.Info, *boardFiles, error) {
	info, err := recording.Read(path, nil)
	if err != nil {
		return nil, nil, err
	}
	// Missing files stop a replay of the recorded board; a board given
	// instead names files of its own.
	files, err := unpackFiles(path, info, dir, o.Board == nil)
	if err != nil {
		return nil, nil, err
	}
	if o.Board != nil {
		o.Board, err = files.localize(o.Board, o.Dir)
		return info, files, err
	}
	y := info.Attachments[record.BoardFile]
	if len(y) == 0 {
		return nil, nil, fmt.Errorf("%s has no board.yaml attached: give one with --board", path)
	}
	if o.Dir == "" {
		o.Dir = filepath.Dir(path)
		if len(files.from) > 0 {
			o.Dir = dir
		}
	}
	if o.Board, err = board.Parse(filepath.Join(o.Dir, "(recorded board).yaml"), y); err != nil {
		return nil, nil, fmt.Errorf("the recorded board no longer loads (give one with --board):\n%w", err)
	}
	return info, files, nil
}

// unpackFiles writes the board's files a recording carries into dir,
// under their attachment names, streamed out of the recording. A file it
// carries only by its SHA-256 (over the recorder's attach_max_bytes) is
// taken from where it was recorded if the file there has that hash. With
// strict, a file the recorded board names that is neither is an error that
// names its board setting; a recording made before files had details (no
// hashes, no settings) says its attachment's name.
func unpackFiles(path string, info *recording.Info, dir string, strict bool) (*boardFiles, error) {
	f := &boardFiles{dir: dir, from: map[string]string{}}
	details := info.Meta[record.MetaFileDetails]
	want := map[string]string{}
	got := map[string]string{} // recorded path -> where it is now, if it is
	var missing []string
	for name, from := range info.Meta[record.MetaFiles] {
		if !strings.HasPrefix(name, record.FilesPrefix) || !filepath.IsLocal(name) {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		got[from] = p
		var d record.FileDetails
		known := json.Unmarshal([]byte(details[name]), &d) == nil
		_, attached := info.Attached[name]
		switch {
		case attached && (!known || d.Attached):
			want[name] = p
		case !known:
			missing = append(missing, name+": not in the recording")
		default:
			if why := useLocal(from, p, d); why != "" {
				missing = append(missing, fmt.Sprintf("%s (%s, %d bytes): %s", d.Key, name, d.Bytes, why))
			}
		}
	}
	if err := recording.Extract(path, want); err != nil && strict {
		return nil, err
	}
	for name, p := range want {
		if !fileExists(p) {
			missing = append(missing, name+": its attachment is lost (the file is damaged)")
		}
	}
	for from, p := range got {
		if fileExists(p) {
			f.from[from] = p
		}
	}
	if len(missing) > 0 && strict {
		slices.Sort(missing)
		return nil, fmt.Errorf("%s: the board names files this replay does not have:\n  %s\n"+
			"put each where it was recorded from (edgeagent recording info lists where), or give --board",
			path, strings.Join(missing, "\n  "))
	}
	return f, nil
}

// useLocal links the file the recording carries only by its hash to p
// when a file here has that hash: the one where it was recorded, or the
// same path's tail under the current folder (another checkout of the same
// tree: /home/pi/edgeagent/models/x.onnx is models/x.onnx here). Else it
// says why not.
func useLocal(from, p string, d record.FileDetails) string {
	if d.SHA256 == "" {
		return "not in the recording: " + d.Why
	}
	changed := false
	for i, c := range candidates(from) {
		sum, err := record.SumFile(c)
		if err != nil {
			continue
		}
		if sum != d.SHA256 {
			changed = changed || i == 0
			continue
		}
		target, err := filepath.Abs(c) // a link's relative target would be read from the link's folder
		if err == nil {
			err = os.Symlink(target, p)
		}
		if err != nil {
			return "not attached, and it could not be linked into the replay's folder"
		}
		return ""
	}
	if changed {
		return "not attached (" + d.Why + "), and the file where it was recorded from has changed since (another SHA-256)"
	}
	return "not attached (" + d.Why + "), and neither where it was recorded from nor under the current folder"
}

// candidates are where a file recorded at from may be here: there, then
// the tails of its path under the current folder, longest first.
func candidates(from string) []string {
	out := []string{from}
	wd, err := os.Getwd()
	if err != nil {
		return out
	}
	parts := strings.Split(filepath.ToSlash(filepath.Clean(from)), "/")
	for i := 1; i < len(parts); i++ {
		if tail := filepath.Join(parts[i:]...); tail != "" {
			out = append(out, filepath.Join(wd, tail))
		}
	}
	return out
}

// localize points the files cfg names (from its folder dir) that are not
// there to the recording's: a path as it was recorded, or the name of an
// attachment (files/1/hello.wav, as the recorded board names it).
func (f *boardFiles) localize(cfg *board.Config, dir string) (*board.Config, error) {
	if len(f.from) == 0 {
		return cfg, nil
	}
	y, err := cfg.Marshal()
	if err != nil {
		return nil, err
	}
	out, err := record.RewritePaths(y, dir, func(_, p string) (string, bool) {
		if _, err := os.Stat(p); err == nil {
			return "", false
		}
		if u, ok := f.from[p]; ok {
			return u, true
		}
		if rel, err := filepath.Rel(dir, p); err == nil && strings.HasPrefix(rel, record.FilesPrefix) {
			if u := filepath.Join(f.dir, rel); fileExists(u) {
				return u, true
			}
		}
		return "", false
	})
	if err != nil || string(out) == string(y) {
		return cfg, err
	}
	return board.Parse(filepath.Join(dir, "(board).yaml"), out)
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
