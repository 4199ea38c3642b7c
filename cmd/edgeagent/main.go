// Command edgeagent is the agent runtime for robots and edge boards.
// This package only wires things together; the logic lives in the packages.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/internal/registry"
)

// pprofEnv names a loopback address at which `run` serves Go's profiles
// (heap, goroutines, CPU) for as long as it runs: how a memory creep on a
// board is found (scripts/soak.sh takes heap profiles through it). Off
// unless set. The full build serves them (pprof.go); the robot profile
// leaves the profiler out and refuses the variable (pprof_robot.go).
const pprofEnv = "EDGEAGENT_PPROF"

// rootCmd is extended by the files of this package: each subcommand lives in
// its own file and adds itself from init.
var rootCmd = &cobra.Command{
	Use:           "edgeagent",
	Short:         "Agent runtime for robots and edge boards (Raspberry Pi, Jetson)",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	// Go samples allocations for heap profiles by default, one per 512
	// KiB; its sample table held ~1.4 MB of the sim board's RSS (issue 11)
	// that nothing reads unless profiles are served. Off from the start,
	// since samples taken before a change of rate are kept.
	if os.Getenv(pprofEnv) == "" {
		runtime.MemProfileRate = 0
	}
	if err := rootCmd.Execute(); err != nil {
		if missing := otherProfiles(os.Args[1:]); missing != "" {
			err = errors.New(missing)
		}
		fmt.Fprintln(os.Stderr, "edgeagent:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is 1, or the code a command's error asks for (fleet's 2 for a
// target nobody is in).
func exitCode(err error) int {
	var coded interface{ ExitCode() int }
	if errors.As(err, &coded) && coded.ExitCode() > 0 {
		return coded.ExitCode()
	}
	return 1
}

// otherProfiles explains a command this binary lacks but another build
// profile holds ("eval" in the robot profile), or returns "".
func otherProfiles(args []string) string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			break
		}
		words = append(words, a)
	}
	for n := min(len(words), 2); n > 0; n-- {
		path := strings.Join(words[:n], " ")
		if c, _, err := rootCmd.Find(words[:n]); err == nil && c.CommandPath() == rootCmd.Name()+" "+path {
			return "" // this binary has it
		}
		if e := registry.Elsewhere(registry.Command, path); e != "" {
			return fmt.Sprintf("command %q: %s", path, e)
		}
	}
	return ""
}
