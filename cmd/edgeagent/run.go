package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/sdnotify"
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
			n, log, err := loadNode(boardPath, false)
			if err != nil {
				return err
			}
			done := make(chan struct{})
			defer close(done)
			go superviseWithSystemd(n, log, done)
			return n.Run(ctx, processStart)
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file")
	rootCmd.AddCommand(cmd)
}

// superviseWithSystemd tells systemd when the agent is ready and feeds its
// watchdog while the node is healthy. Without systemd it does nothing.
func superviseWithSystemd(n *node.Node, log *slog.Logger, done <-chan struct{}) {
	select {
	case <-n.Ready():
	case <-done:
		return
	}
	if sent, err := sdnotify.Notify("READY=1"); err != nil {
		log.Warn("sd_notify failed", "err", err)
	} else if sent {
		log.Info("told systemd we are ready")
	}
	defer func() { _, _ = sdnotify.Notify("STOPPING=1") }()
	interval, ok := sdnotify.WatchdogInterval()
	if !ok {
		<-done
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			if err := n.Healthy(); err != nil {
				log.Error("not feeding the systemd watchdog", "err", err)
				continue
			}
			_, _ = sdnotify.Notify("WATCHDOG=1")
		}
	}
}
