// Command edgeagent is the agent runtime for robots and edge boards.
// This package only wires things together; the logic lives in the packages.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// rootCmd is extended by the files of this package: each subcommand lives in
// its own file and adds itself from init.
var rootCmd = &cobra.Command{
	Use:           "edgeagent",
	Short:         "Agent runtime for robots and edge boards (Raspberry Pi, Jetson)",
	SilenceUsage:  true,
	SilenceErrors: true,
}

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "edgeagent:", err)
		os.Exit(1)
	}
}
