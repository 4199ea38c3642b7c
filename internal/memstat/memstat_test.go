package memstat

import (
	"os"
	"runtime"
	"testing"
)

func TestRead(t *testing.T) {
	keep := make([]byte, 8<<20)
	for i := range keep {
		keep[i] = 1
	}
	runtime.GC()
	s := Read()
	if s.HeapLive < 8<<20 || s.HeapGoal < s.HeapLive || s.GoTotal < s.HeapObjects || s.Stacks == 0 || s.Metadata == 0 || s.GCs == 0 {
		t.Fatalf("runtime classes: %+v", s)
	}
	runtime.KeepAlive(keep)
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc: resident sizes not read")
	}
	if s.RSS < 8<<20 || s.RSSAnon < 8<<20 || s.RSSFile == 0 || s.RSSAnon+s.RSSFile > s.RSS+1<<20 {
		t.Fatalf("resident: %+v", s)
	}
}

func TestProcKiB(t *testing.T) {
	status := []byte("Name:\tx\nVmRSS:\t   30264 kB\nRssAnon:\t   10740 kB\n")
	got := procKiB(status, "VmRSS:", "RssFile:", "RssAnon:")
	if got[0] != 30264<<10 || got[2] != 10740<<10 {
		t.Fatalf("VmRSS %d, RssAnon %d", got[0], got[2])
	}
	if got[1] != 0 {
		t.Fatalf("a missing line read %d", got[1])
	}
}
