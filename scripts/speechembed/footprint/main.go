// Command footprint measures what the speech frontend adds to a binary and
// to a process: built as is it loads the built-in weights and streams 10 s
// of audio; built with -tags baseline it does neither. Run by
// scripts/speechembed-footprint.sh, which prints both sizes and both RSS.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
)

// run is set by frontend.go unless built with -tags baseline.
var run func() (string, error)

func main() {
	msg := "baseline"
	if run != nil {
		var err error
		if msg, err = run(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	runtime.GC()
	debug.FreeOSMemory()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var fields []string
	for _, l := range strings.Split(string(b), "\n") {
		for _, k := range []string{"VmRSS:", "RssAnon:", "RssFile:"} {
			if strings.HasPrefix(l, k) {
				fields = append(fields, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	fmt.Printf("%s: %s\n", msg, strings.Join(fields, ", "))
}
