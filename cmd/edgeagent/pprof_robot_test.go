//go:build robot

package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"
)

func TestRobotProfileRefusesPprof(t *testing.T) {
	_, err := servePprof(context.Background(), "127.0.0.1:0", slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), pprofEnv) || !strings.Contains(err.Error(), "--profile full") {
		t.Fatalf("err = %v", err)
	}
}
