//go:build !robot

package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestPprofLoopbackOnly(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, addr := range []string{"0.0.0.0:0", "192.168.1.2:6060", "nohost"} {
		if _, err := servePprof(context.Background(), addr, log); err == nil || !strings.Contains(err.Error(), pprofEnv) {
			t.Errorf("%s: %v", addr, err)
		}
	}
	var logged strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	wait, err := servePprof(ctx, "127.0.0.1:0", slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	url := regexp.MustCompile(`url=(\S+)`).FindStringSubmatch(logged.String())
	if url == nil {
		t.Fatalf("no url logged: %s", logged.String())
	}
	resp, err := http.Get(url[1] + "heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "heap profile") {
		t.Fatalf("%d %.80s", resp.StatusCode, body)
	}
	cancel()
	wait()
}
