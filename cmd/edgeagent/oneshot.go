package main

import (
	"context"
	"errors"

	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/node"
)

// runOnce runs n for one CLI command (decide, invoke): it starts the node,
// calls fn once the node is ready, then stops it, and returns fn's error or
// else the node's. The node runs without its MQTT plugin: a one-off command
// is not the robot's control plane, and with MQTT it would take over the
// agent's persistent session (and the commands queued for it) and announce
// the robot to Home Assistant. Nor does it serve the dashboard (the
// agent's port) or the local admin socket (the agent's).
func runOnce(ctx context.Context, n *node.Node, fn func(context.Context) error) error {
	for _, p := range []string{"mqtt", "dashboard", "adminsock"} {
		if err := n.UnloadPlugin(ctx, p); err != nil && !errors.Is(err, hooks.ErrNotFound) {
			_ = n.Close()
			return err
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- n.Run(runCtx, processStart) }()
	select {
	case <-n.Ready():
	case err := <-done:
		return err
	}
	ferr := fn(ctx)
	cancel()
	if err := <-done; err != nil && ferr == nil {
		ferr = err
	}
	return ferr
}
