package datafile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func digest(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

func TestMapChecksAndMaps(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	content := []byte("weights\x00\x01\x02")
	if err := os.WriteFile(filepath.Join(dir, "m.bin"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Map("m.bin", SHA256(digest(content)))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(content) {
		t.Fatalf("mapped %q, want %q", b, content)
	}

	_, err = Map("m.bin", SHA256(digest([]byte("another build"))))
	if err == nil || !strings.Contains(err.Error(), "not the file this binary was built with") {
		t.Fatalf("a foreign file: %v", err)
	}
	if strings.Contains(err.Error(), "weights") {
		t.Errorf("the error quotes the file's content: %v", err)
	}
}

func TestMapMissingSaysWhereAndHow(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	_, err := Map("absent.bin", SHA256(digest(nil)))
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("got %v, want ErrMissing", err)
	}
	for _, want := range []string{"absent.bin", dir, "scripts/cross-compile.sh", EnvDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error does not say %q: %v", want, err)
		}
	}
}

func TestMapRefusesEmptyAndDirectories(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	if err := os.WriteFile(filepath.Join(dir, "empty.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "d.bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"empty.bin", "d.bin"} {
		if _, err := Map(name, SHA256(digest(nil))); err == nil || !strings.Contains(err.Error(), "not a model file") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestDirsBesideTheExecutable(t *testing.T) {
	t.Setenv(EnvDir, "")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(exe)
	want := []string{filepath.Join(bin, DirName), filepath.Join(bin, "..", "lib", "edgeagent")}
	if got := Dirs(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Dirs() = %q, want %q", got, want)
	}
}
