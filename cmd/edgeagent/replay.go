//go:build !robot

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/record/replay"
)

// errDiverged makes `replay --check` exit non-zero without a second message.
var errDiverged = errors.New("the replay diverged from the recording")

func init() {
	var (
		o         replay.Options
		boardPath string
		fast      bool
		check     bool
	)
	cmd := &cobra.Command{
		Use:   "replay FILE.mcap",
		Short: "Feed a recording back into the agent and compare what it decides",
		Long: `Feed the recorded observations, events and tool calls made over MQTT or the
CLI, at their recorded times on a virtual clock, into an agent built from the recorded board (or --board), with
simulated actuators and no sensors, MQTT or store. At the end, print how the
decisions, tool calls and actuator writes compare with the recording and the
first divergence with its context. --check exits non-zero on a divergence.

A recording carries the files its board names (a mic's utterances, a
wake-word head, skill texts) and is replayed with them, on any machine; a
--board that names a file that is not there, as the recorded board names it
(files/1/hello.wav) or as it was named when recorded, gets the recording's.
A config reload made while recording is replayed at its time: the agent is
rebuilt from the board it loaded.

--llm recorded answers every LLM call from the recording (a different prompt
is a divergence); live asks the board's Ollama; off keeps to the fast paths.

--detections recorded feeds the recorded motion and wake-word detections.
--detections detectors runs the recorded camera frames (record.frames) and
microphone audio (record: {audio: true}) through the motion and wake-word
detectors of the board (the recorded one or --board) instead, and feeds
what they find at the frames' and chunks' times; the report lists, per
sensor, the detections that vanished or appeared (with their times) beside
the decision diff, and --check fails on either. Use it to check a new
threshold, mask or wake-word model against yesterday's recordings. The
detector sees only the recorded frames: record them at the camera's rate
(frames.interval and snapshot_interval ≤ the frame period) for the
detections of the live run to come out again.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			if fast {
				o.Speed = 0
			} else if o.Speed <= 0 {
				return fmt.Errorf("--speed %v: want > 0, or --as-fast-as-possible", o.Speed)
			}
			o.Board, o.Dir = nil, "" // not a previous run's (tests execute the command again)
			if boardPath != "" {
				cfg, err := board.Load(boardPath)
				if err != nil {
					return err
				}
				o.Board, o.Dir = cfg, filepath.Dir(boardPath)
			}
			if flagLogLevel == "" {
				flagLogLevel = "warn" // the report is the output
			}
			log, err := newLogger(o.Board)
			if err != nil {
				return err
			}
			o.Log = log
			o.Progress = cmd.ErrOrStderr()
			rep, err := replay.Run(ctx, args[0], o)
			if err != nil {
				return err
			}
			rep.Print(cmd.OutOrStdout())
			if check && rep.Diverged() {
				return errDiverged
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&boardPath, "board", "", "replay into this board instead of the recorded one")
	f.Float64Var(&o.Speed, "speed", 1, "replay at N times the recorded pace")
	f.BoolVar(&fast, "as-fast-as-possible", false, "replay as fast as the agent handles the inputs")
	f.StringVar(&o.LLM, "llm", "recorded", "LLM answers: recorded, live or off")
	f.BoolVar(&o.Frames, "frames", true, "feed recorded camera frames back as snapshots")
	f.StringVar(&o.Detections, "detections", "recorded", "motion and wake-word detections: recorded, or detectors (the recorded frames and audio through the board's detectors)")
	f.BoolVar(&check, "check", false, "exit non-zero when the replay diverges")
	f.StringVar(&o.Out, "out", "", "record the replay into this new MCAP file")
	rootCmd.AddCommand(cmd)
}
