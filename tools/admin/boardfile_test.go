package admin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A reload path cannot leave the board's directory, by .. or by a symlink,
// and its errors name the path's fault, never a file's content.
func TestConfine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "boards")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, "pi.yaml"), filepath.Join(root, "secret.yaml")} {
		if err := os.WriteFile(f, []byte("device: {id: x}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "secret.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if got, err := confine(dir, "pi.yaml"); err != nil || filepath.Base(got) != "pi.yaml" {
		t.Fatalf("inside: %q, %v", got, err)
	}
	for p, want := range map[string]string{
		"../secret.yaml": "outside the board directory",
		"link.yaml":      "outside the board directory",
		"none.yaml":      "no such board file",
		"pi.txt":         "ends in .yaml or .yml",
	} {
		if _, err := confine(dir, p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
}
