package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// processStart is as early as Go lets us measure start-to-ready.
var processStart = time.Now()

func init() {
	var boardPath string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the agent on a board (default: the simulated board)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			n, _, err := loadNode(boardPath, false)
			if err != nil {
				return err
			}
			return n.Run(ctx, processStart)
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file")
	rootCmd.AddCommand(cmd)
}
