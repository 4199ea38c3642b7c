package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// Stamped by scripts/cross-compile.sh through -ldflags -X.
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

func init() {
	rootCmd.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print version, commit and build date",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "edgeagent %s (commit %s, built %s, %s %s/%s)\n",
				version, commit, date, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	})
}
