// Command fakeollama is a model server that answers every chat and
// generate request with one fixed document (and embeds with the fake's
// hashed bag of words): the model's stand-in for recording scenarios
// without Ollama (scripts/replay-check.sh with OLLAMA=fake). It is
// llm/local/ollamatest's server, so it speaks Ollama's HTTP API. It prints
// its base URL on the first line and serves until interrupted.
//
//	go run ./scripts/fakeollama qwen2.5:1.5b '{"scenario":"environment"}'
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
)

func main() {
	if len(os.Args) != 3 || os.Args[1] == "" {
		fmt.Fprintln(os.Stderr, "usage: fakeollama MODEL ANSWER")
		os.Exit(2)
	}
	answer := os.Args[2]
	srv, err := ollamatest.Listen(os.Args[1], "all-minilm:latest")
	if err != nil {
		fmt.Fprintln(os.Stderr, "fakeollama:", err)
		os.Exit(1)
	}
	srv.OnRequest(func(ollamatest.Request) ollamatest.Answer { return ollamatest.Answer{Content: answer} })
	fmt.Println(srv.URL())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	srv.Stop()
}
