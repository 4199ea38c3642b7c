package motion_test

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteClips writes the clips made from the shared footage to the
// directory in MOTION_CLIPS_OUT, for scripts/motion-vs-frigate.sh: each as
// NAME.y4m, with NAME.truth.json (ground-truth boxes) and NAME.steps.json
// (frames where the light steps) where the clip has them.
func TestWriteClips(t *testing.T) {
	dir := os.Getenv("MOTION_CLIPS_OUT")
	if dir == "" {
		t.Skip("MOTION_CLIPS_OUT not set: nothing to write (scripts/motion-vs-frigate.sh sets it)")
	}
	for _, name := range footageNames {
		if name == "vtest" || name == "static_lighting" {
			continue // the shared clips are read as they are
		}
		c := footage(t, name)
		write(t, filepath.Join(dir, name+".y4m"), c.WriteY4M)
		if c.Truth != nil {
			write(t, filepath.Join(dir, name+".truth.json"), c.WriteTruth)
		}
		if c.Steps != nil {
			b, err := json.Marshal(c.Steps)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+".steps.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func write(t *testing.T, path string, fn func(w io.Writer) error) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := fn(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}
