package syncbuf

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Writers on several goroutines lose nothing and race with no reader
// (run with -race).
func TestConcurrentWriters(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 100 {
				fmt.Fprintf(&b, "w%d\n", i)
				_ = b.String()
			}
		})
	}
	wg.Wait()
	got := b.String()
	if n := strings.Count(got, "\n"); n != 800 {
		t.Fatalf("%d lines written, want 800", n)
	}
	for i := range 8 {
		if n := strings.Count(got, fmt.Sprintf("w%d\n", i)); n != 100 {
			t.Errorf("writer %d: %d lines, want 100", i, n)
		}
	}
}

func TestSliceConcurrentAppends(t *testing.T) {
	var l Slice[int]
	if l.All() != nil {
		t.Fatal("a zero Slice is not empty")
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				l.Append(i*100 + j)
				_ = l.All()
			}
		})
	}
	wg.Wait()
	got := l.All()
	if len(got) != 800 {
		t.Fatalf("%d items, want 800", len(got))
	}
	got[0] = -1 // a copy: the list keeps its own
	if l.All()[0] == -1 {
		t.Fatal("All shares the list's storage")
	}
}
