package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestPutGetAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put("b", "k", map[string]int{"n": 3}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v map[string]int
	ok, err := s.Get("b", "k", &v)
	if err != nil || !ok || v["n"] != 3 {
		t.Fatalf("got %v %v %v", v, ok, err)
	}
	if ok, _ := s.Get("b", "missing", &v); ok {
		t.Fatal("missing key reported present")
	}
	if err := s.Delete("b", "k"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Get("b", "k", &v); ok {
		t.Fatal("deleted key still present")
	}
}

func TestLockedStoreFailsFast(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Open(path)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "is an edgeagent running") {
		t.Fatalf("second open: %v", err)
	}
}
