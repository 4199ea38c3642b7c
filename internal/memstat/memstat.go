// Package memstat reports where the process's memory is: the resident set
// as the kernel counts it (what a memory budget is held to) and the Go
// runtime's own classes (what the code can change), so that agent.status
// says which of the two grew.
package memstat

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"
)

// Stats are in bytes. The resident fields are zero where /proc is not.
type Stats struct {
	RSS     uint64 `json:"rss"`      // resident set (VmRSS)
	RSSAnon uint64 `json:"rss_anon"` // of which anonymous: heap, stacks, runtime, C
	RSSFile uint64 `json:"rss_file"` // of which file-backed: the executable, libraries, the store's map

	HeapLive     uint64 `json:"heap_live"`     // reachable at the last GC
	HeapGoal     uint64 `json:"heap_goal"`     // where the next GC starts
	HeapObjects  uint64 `json:"heap_objects"`  // in use or not yet swept
	HeapFree     uint64 `json:"heap_free"`     // mapped, free, not returned to the OS
	HeapReleased uint64 `json:"heap_released"` // returned to the OS
	Stacks       uint64 `json:"stacks"`
	Metadata     uint64 `json:"runtime_metadata"` // GC and allocator bookkeeping
	GoTotal      uint64 `json:"go_total"`         // everything the Go runtime mapped
	GCs          uint64 `json:"gc_cycles"`
}

var names = []string{
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/os-stacks:bytes",
	"/memory/classes/metadata/mcache/free:bytes",
	"/memory/classes/metadata/mcache/inuse:bytes",
	"/memory/classes/metadata/mspan/free:bytes",
	"/memory/classes/metadata/mspan/inuse:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/total:bytes",
	"/gc/cycles/total:gc-cycles",
}

// Read takes a snapshot. It allocates a little (the samples) and stops
// nothing: runtime/metrics reads without a stop-the-world.
func Read() Stats {
	samples := make([]metrics.Sample, len(names))
	for i, n := range names {
		samples[i].Name = n
	}
	metrics.Read(samples)
	v := make([]uint64, len(samples))
	for i, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	st := Stats{HeapLive: v[0], HeapGoal: v[1], HeapObjects: v[2], HeapFree: v[3], HeapReleased: v[4],
		Stacks: v[5] + v[6], Metadata: v[7] + v[8] + v[9] + v[10] + v[11], GoTotal: v[12], GCs: v[13]}
	if status, err := os.ReadFile("/proc/self/status"); err == nil {
		kib := procKiB(status, "VmRSS:", "RssAnon:", "RssFile:")
		st.RSS, st.RSSAnon, st.RSSFile = kib[0], kib[1], kib[2]
	}
	return st
}

// procKiB reads the "Name:   123 kB" lines of /proc/self/status that
// names asks for, in bytes, in one pass (0 for a line that is missing).
func procKiB(status []byte, names ...string) []uint64 {
	out := make([]uint64, len(names))
	for line := range bytes.Lines(status) {
		for i, name := range names {
			if rest, ok := bytes.CutPrefix(line, []byte(name)); ok {
				if f := bytes.Fields(rest); len(f) > 0 {
					n, _ := strconv.ParseUint(string(f[0]), 10, 64)
					out[i] = n << 10
				}
			}
		}
	}
	return out
}
