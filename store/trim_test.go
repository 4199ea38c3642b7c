package store

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// mappedKiB is the resident size of this process's maps of path
// (/proc/self/smaps).
func mappedKiB(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps (%v): the map's residency cannot be read here", err)
	}
	defer f.Close()
	kib, in := 0, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 5 && strings.Contains(fields[0], "-"):
			in = len(fields) == 6 && fields[5] == path
		case in && fields[0] == "Rss:":
			n, _ := strconv.Atoi(fields[1])
			kib += n
		}
	}
	return kib
}

// Every trimEvery writes the store drops the pages of its file it has
// mapped: reading the whole file maps all of it, and a turn of writes
// later only what those writes used is left.
func TestWritesTrimTheMap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/self/smaps")
	}
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	value := strings.Repeat("x", 1000)
	for i := range 40 {
		batch := map[string]any{}
		for k := range 100 {
			batch[fmt.Sprint(i, "-", k)] = value
		}
		if err := s.PutMany("b", batch); err != nil {
			t.Fatal(err)
		}
	}
	read := func() {
		if err := s.ForEach("b", func(string, json.RawMessage) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	read()
	full := mappedKiB(t, path)
	if full < 2048 {
		t.Fatalf("reading 4 MB of values mapped only %d KiB", full)
	}
	for s.writes.Load()%trimEvery != 0 {
		if err := s.Put("c", "k", s.writes.Load()); err != nil {
			t.Fatal(err)
		}
	}
	if got := mappedKiB(t, path); got > full/8 {
		t.Fatalf("after a turn of writes %d KiB of the file are mapped (%d before)", got, full)
	}
	read() // the pages come back from the page cache, the values with them
	if got := mappedKiB(t, path); got < full/2 {
		t.Fatalf("reading again mapped %d KiB", got)
	}
}
