// Command fakestt is a Wyoming speech-to-text server that answers every
// utterance with one fixed transcript: the speech model's stand-in for
// recording scenarios on machines without Whisper (scripts/regen-scenarios.sh
// runs it for the wake word → command scenario). It prints its address
// (tcp://127.0.0.1:PORT) on the first line and serves until interrupted.
//
//	go run ./scripts/fakestt "turn on the headlight"
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgeagent/edgeagent/sensors/mic/wyoming/wyomingtest"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" {
		fmt.Fprintln(os.Stderr, "usage: fakestt TRANSCRIPT")
		os.Exit(2)
	}
	text := os.Args[1]
	srv, err := wyomingtest.Start(&wyomingtest.Server{Transcribe: func([]int16) string { return text }})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakestt:", err)
		os.Exit(1)
	}
	fmt.Println(srv.Addr())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	srv.Close()
}
