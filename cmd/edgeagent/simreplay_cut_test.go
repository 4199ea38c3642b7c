//go:build !robot

package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/llm/local/ollamatest"
	"github.com/edgeagent/edgeagent/node"
	"github.com/edgeagent/edgeagent/record/replay"
)

// A model that never answers in time (the real one on a slow board): an
// LLM call still in flight when a config reload stops the node is cut off,
// and its exchange and decision are recorded as the node stops, before its
// recorder and actuators stop. The replay cuts the call off at the reload
// too and reads the node's stream at the same point, so it is identical.
func TestSimBoardReloadCutsOffAnLLMCall(t *testing.T) {
	if testing.Short() {
		t.Skip("records the sim board for a few seconds")
	}
	srv := ollamatest.Start(t, "qwen2.5:1.5b")
	srv.OnRequest(func(r ollamatest.Request) ollamatest.Answer {
		if r.Chat == nil {
			return ollamatest.Answer{} // the preload
		}
		return ollamatest.Answer{Hang: true}
	})
	cfg, dir := simBoard(t, srv.URL())
	reload := func(current func() *node.Node) {
		n := current()
		go func() {
			_, _ = n.Agent.Submit(context.Background(), agent.Command{Caller: "mqtt", Text: "the air feels stale in here, do what helps"})
		}()
		for !slices.ContainsFunc(srv.Requests(), func(r ollamatest.Request) bool { return r.Chat != nil }) {
			time.Sleep(5 * time.Millisecond)
		}
		reloadChangedReflex(t, n)
	}
	file := recordSim(t, cfg, dir, 3*time.Second, false, reload)
	for range 3 {
		rep, out := replayed(t, file, replay.Options{})
		cut := 0
		for _, a := range rep.Recorded {
			if a.Kind == "llm" && strings.Contains(a.What, " cut off ") {
				cut++
			}
		}
		if rep.Diverged() || rep.Reloads != 1 || cut == 0 {
			t.Fatalf("want the call cut off by the reload, as recorded:\n%s", out)
		}
	}
}
