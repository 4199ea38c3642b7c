package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/node/toolcheck"
	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/sdnotify"
)

// processStart is as early as Go lets us measure start-to-ready.
var processStart = time.Now()

func init() {
	var boardPath, recordPath string
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the agent on a board (default: the simulated board)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			n, log, err := loadNode(boardPath, false, setGCPercent)
			if err != nil {
				return err
			}
			if err := toolcheck.Check(n); err != nil {
				// Said once here rather than at every firing; the robot runs
				// without what is missing (edgeagent check fails on it).
				log.Warn("the board names tools that are not there", "err", err)
			}
			if err := recordTo(n, recordPath); err != nil {
				return err
			}
			if addr := os.Getenv(pprofEnv); addr != "" {
				wait, err := servePprof(ctx, addr, log)
				if err != nil {
					_ = n.Close()
					return err
				}
				defer wait()
				defer stop() // ends the profile server before waiting for it
			}
			var current atomic.Pointer[node.Node]
			current.Store(n)
			done := make(chan struct{})
			defer close(done)
			go superviseWithSystemd(&current, log, done)
			return runNodes(ctx, n, filepath.Dir(boardPath), boardPath, &current, log)
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file")
	cmd.Flags().StringVar(&recordPath, "record", "", "record the run into this MCAP file (it must not exist)")
	rootCmd.AddCommand(cmd)
}

// setGCPercent applies the board's GC target as soon as the board is read,
// before the node is built: building it allocates most of what start-up
// allocates, and a heap grown under Go's default target keeps its pages
// until the scavenger returns them. A reload applies the new board's
// target (Go's default 100 too, when the new board sets none). GOGC in
// the environment wins. Zero is a config not read through board (whose
// default is 100): it changes nothing.
func setGCPercent(cfg *board.Config) {
	if pct := cfg.Agent.GCPercent; pct != 0 && os.Getenv("GOGC") == "" {
		debug.SetGCPercent(pct)
	}
}

// buildNode builds the node of a board a reload brings (or of the board
// that was running, when the new one cannot be built), with that board's
// GC target.
func buildNode(cfg *board.Config, dir, file string, log *slog.Logger) (*node.Node, error) {
	setGCPercent(cfg)
	return node.New(cfg, node.Options{Log: log, ConfigDir: dir, ConfigFile: file})
}

// runNodes runs n until ctx ends. A board reload accepted over MQTT (already
// validated) stops the running node and starts one built from the new
// config; if that cannot be built, the previous config comes back. The
// reload is a record in the stream, and a recording goes on across it in
// the same file (record.Continuation).
func runNodes(ctx context.Context, n *node.Node, dir, file string, current *atomic.Pointer[node.Node], log *slog.Logger) error {
	started := processStart
	for {
		nctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- n.Run(nctx, started) }()
		select {
		case err := <-done:
			cancel()
			return err
		case r := <-n.ReloadRequests():
			log.Info("reloading the board config", "device", r.Config.Device.ID)
			if err := record.NoteReload(n.World, r.Config, r.Dir); err != nil {
				log.Warn("the reload is not in the stream", "err", err)
			}
			var carry *record.Continuation
			if rec, ok := node.Find[handOver](n); ok {
				carry = rec.HandOver()
			}
			cancel()
			if err := <-done; err != nil {
				log.Warn("stopping the old node", "err", err)
			}
			started = time.Now()
			next, err := buildNode(r.Config, r.Dir, r.File, log)
			if err != nil {
				log.Error("the new board config could not be built; keeping the previous one", "err", err)
				if next, err = buildNode(n.Board, dir, file, log); err != nil {
					if carry != nil {
						carry.Close()
					}
					return err
				}
			} else {
				dir, file = r.Dir, r.File
			}
			takeOver(next, carry, log)
			n = next
			current.Store(n)
		}
	}
}

// handOver is the recorder plugin as a reload sees it.
type handOver interface {
	HandOver() *record.Continuation
	TakeOver(*record.Continuation) bool
}

// takeOver makes the next node's recorder record on into the file the
// previous node's handed over.
func takeOver(next *node.Node, carry *record.Continuation, log *slog.Logger) {
	if carry == nil {
		return
	}
	if rec, ok := node.Find[handOver](next); ok && rec.TakeOver(carry) {
		return
	}
	log.Warn("the recording ends at the reload (the new board has no recorder, or it had stopped recording)")
	carry.Close()
}

// superviseWithSystemd tells systemd when the agent is ready and feeds its
// watchdog while the running node is healthy. Without systemd it does
// nothing.
func superviseWithSystemd(current *atomic.Pointer[node.Node], log *slog.Logger, done <-chan struct{}) {
	select {
	case <-current.Load().Ready():
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
			if err := current.Load().Healthy(); err != nil {
				log.Error("not feeding the systemd watchdog", "err", err)
				continue
			}
			_, _ = sdnotify.Notify("WATCHDOG=1")
		}
	}
}
