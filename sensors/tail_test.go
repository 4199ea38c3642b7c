package sensors

import (
	"strings"
	"testing"
)

func TestTailKeepsTheEnd(t *testing.T) {
	tl := &Tail{Max: 20}
	tl.Write([]byte("first line\n"))
	tl.Write([]byte("error: no camera\n"))
	if got := tl.String(); got != "ne\nerror: no camera\n" {
		t.Fatalf("short tail %q", got)
	}
	long := &Tail{}
	for i := 0; i < 200; i++ {
		long.Write([]byte("noise noise noise\n"))
	}
	long.Write([]byte("fatal: device busy\n"))
	if got := long.String(); got != "fatal: device busy\n" {
		t.Fatalf("long tail %q", got)
	}
	if len(long.b) != 2048 || !strings.HasSuffix(string(long.b), "fatal: device busy\n") {
		t.Fatalf("kept %d bytes", len(long.b))
	}
}
