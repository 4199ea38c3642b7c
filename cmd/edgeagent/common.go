package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/node"
)

// defaultBoard is the simulated board: the whole runtime on a laptop.
const defaultBoard = "board-configs/sim.yaml"

var (
	flagLogFormat string
	flagLogLevel  string
)

func init() {
	rootCmd.PersistentFlags().StringVar(&flagLogFormat, "log-format", "", "log format: text or json (default: the board's log.format)")
	rootCmd.PersistentFlags().StringVar(&flagLogLevel, "log-level", "", "log level: debug, info, warn, error (default: the board's log.level)")
}

// newLogger builds the process logger; flags override the board config.
func newLogger(cfg *board.Config) (*slog.Logger, error) {
	format, level := flagLogFormat, flagLogLevel
	if cfg != nil {
		if format == "" {
			format = cfg.Log.Format
		}
		if level == "" {
			level = cfg.Log.Level
		}
	}
	var lv slog.Level
	if level != "" {
		if err := lv.UnmarshalText([]byte(level)); err != nil {
			return nil, fmt.Errorf("log level %q: want debug, info, warn or error", level)
		}
	}
	opts := &slog.HandlerOptions{Level: lv}
	var log *slog.Logger
	switch strings.ToLower(format) {
	case "", "text":
		log = slog.New(slog.NewTextHandler(os.Stderr, opts))
	case "json":
		log = slog.New(slog.NewJSONHandler(os.Stderr, opts))
	default:
		return nil, fmt.Errorf("log format %q: want text or json", format)
	}
	// Sensor kinds log through slog.Default (they get no logger of their
	// own): make it the configured one, so every line has one format.
	slog.SetDefault(log)
	return log, nil
}

// loadNode loads a board file and builds its node (nothing started);
// adjust, if given, changes the config first.
func loadNode(path string, noStore bool, adjust ...func(*board.Config)) (*node.Node, *slog.Logger, error) {
	cfg, err := board.Load(path)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range adjust {
		f(cfg)
	}
	log, err := newLogger(cfg)
	if err != nil {
		return nil, nil, err
	}
	n, err := node.New(cfg, node.Options{Log: log, ConfigDir: filepath.Dir(path), NoStore: noStore})
	if err != nil {
		return nil, nil, err
	}
	return n, log, nil
}
