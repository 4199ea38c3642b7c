package admin

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The board file is written by config.reload {save: true} only, and read
// by path only inside the board's directory: both stay unexported here, so
// nothing else (the dashboard's tuning panel included) writes the file
// around the validation.

// saveBoard replaces the board file with data: the old file is kept as
// file.bak, and the new one is written beside it, synced and renamed over
// it, so a power cut leaves either file whole. Errors name the step, not
// the content.
func saveBoard(file string, data []byte) error {
	old, err := os.ReadFile(file)
	if err != nil {
		return errors.New("the board file cannot be read for its backup")
	}
	if err := writeSynced(file+".bak", old); err != nil {
		return fmt.Errorf("the backup %s cannot be written: %w", filepath.Base(file)+".bak", err)
	}
	tmp := file + ".new"
	if err := writeSynced(tmp, data); err != nil {
		return fmt.Errorf("the new board file cannot be written: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		_ = os.Remove(tmp)
		return errors.New("the new board file cannot replace the old one")
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return errors.Unwrap(err) // the *PathError's cause, without the path twice
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// confine resolves a reload path inside the board directory dir. The
// errors say what is wrong with the path, never what is in a file.
func confine(dir, p string) (string, error) {
	if ext := strings.ToLower(filepath.Ext(p)); ext != ".yaml" && ext != ".yml" {
		return "", errors.New("path: a board file ends in .yaml or .yml")
	}
	base, err := filepath.EvalSymlinks(dir)
	if err != nil {
		base = dir
	}
	if base, err = filepath.Abs(base); err != nil {
		return "", errors.New("path: the board directory cannot be resolved")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", errors.New("path: no such board file in the board directory")
		}
		return "", errors.New("path: cannot be resolved")
	}
	if rel, err := filepath.Rel(base, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errors.New("path: outside the board directory (symlinks resolved)")
	}
	return real, nil
}
