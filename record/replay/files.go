package replay

import (
	"fmt"
	"os"
	"path/filepath"
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
	files, err := unpackFiles(info, dir)
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

// unpackFiles writes the board's files a recording carries into dir, under
// their attachment names. One the recording names but lost (too large for
// a reader, or damaged) is not written: the kind that needs it then says
// which.
func unpackFiles(info *recording.Info, dir string) (*boardFiles, error) {
	f := &boardFiles{dir: dir, from: map[string]string{}}
	for name, from := range info.Meta[record.MetaFiles] {
		data, ok := info.Attachments[name]
		if !ok || !strings.HasPrefix(name, record.FilesPrefix) || !filepath.IsLocal(name) {
			continue
		}
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
		f.from[from] = p
	}
	return f, nil
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
	out, err := record.RewritePaths(y, dir, func(p string) (string, bool) {
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
