package store

import (
	"encoding/json"
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

func TestAppendBoundedAndTail(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "s.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 1; i <= 25; i++ {
		if _, err := s.Append("log", i, 10); err != nil {
			t.Fatal(err)
		}
	}
	var all []int
	if err := s.ForEach("log", func(_ string, v json.RawMessage) error {
		var n int
		_ = json.Unmarshal(v, &n)
		all = append(all, n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(all) != 10 || all[0] != 16 || all[9] != 25 {
		t.Fatalf("bounded log holds %v", all)
	}
	var tail []uint64
	_ = s.Tail("log", 3, func(seq uint64, _ json.RawMessage) error { tail = append(tail, seq); return nil })
	if len(tail) != 3 || tail[0] != 23 || tail[2] != 25 {
		t.Fatalf("tail %v", tail)
	}
	tail = nil
	_ = s.Tail("log", 100, func(seq uint64, _ json.RawMessage) error { tail = append(tail, seq); return nil })
	if len(tail) != 10 || tail[0] != 16 {
		t.Fatalf("tail beyond length %v", tail)
	}
}
