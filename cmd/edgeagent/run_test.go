package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	paho "github.com/eclipse/paho.mqtt.golang"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/internal/syncbuf"
	"github.com/edgeagent/edgeagent/node"
)

const reloadBoard = `
data_dir: %s
device: {id: reload-bot, platform: sim}
llm: {enabled: false}
mqtt: {broker: embedded, listen: "127.0.0.1:%d", local_admin: true, discovery: {enabled: false}}
agent: {heartbeat: 1h, gc_percent: %d}
%s
`

// gcPercent reads Go's GC target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestReloadOverMQTT: an admin reload with a new config rebuilds the node
// in the same process, with the new board's GC target; the new actuator's
// tool then answers over MQTT.
func TestReloadOverMQTT(t *testing.T) {
	t.Setenv("GOGC", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	port := freePort(t)
	data := t.TempDir()
	cfg, err := board.Parse("r.yaml", []byte(fmt.Sprintf(reloadBoard, data, port, 100, "")))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer // shown when the test fails: what the nodes did meanwhile
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	log := slog.New(slog.NewTextHandler(&logs, nil))
	n, err := node.New(cfg, node.Options{Log: log})
	if err != nil {
		t.Fatal(err)
	}
	var current atomic.Pointer[node.Node]
	current.Store(n)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runNodes(ctx, n, ".", "", &current, log) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-n.Ready()

	replies := make(chan map[string]any, 8)
	// The embedded broker restarts with the node: subscribe on every connect.
	subscribe := func(c paho.Client) {
		c.Subscribe("edgeagent/reload-bot/reply", 1, func(_ paho.Client, m paho.Message) {
			var r map[string]any
			_ = json.Unmarshal(m.Payload(), &r)
			replies <- r
		})
	}
	c := paho.NewClient(paho.NewClientOptions().AddBroker(fmt.Sprintf("tcp://127.0.0.1:%d", port)).
		SetClientID("reload-test").SetAutoReconnect(true).SetConnectRetry(true).
		SetMaxReconnectInterval(100 * time.Millisecond).SetOnConnectHandler(subscribe))
	if tok := c.Connect(); !tok.WaitTimeout(5*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer c.Disconnect(100)
	// Generous: under CI's parallel packages a node took 13 s from start
	// to ready; what is tested is the reload, not its speed.
	ask := func(topic, payload, id string) map[string]any {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			// Not waiting for the PUBACK long: while the client reconnects
			// to the restarted broker it would hold the next attempt.
			c.Publish("edgeagent/reload-bot/"+topic, 1, false, payload).WaitTimeout(time.Second)
			select {
			case r := <-replies:
				if r["id"] == id {
					return r
				}
			case <-time.After(500 * time.Millisecond): // the broker may be restarting: ask again
			case <-deadline:
				t.Fatalf("no reply to %s", payload)
			}
		}
	}
	if r := ask("cmd", `{"id":"before","tool":"lamp.set","params":{"on":true}}`, "before"); r["ok"] != false {
		t.Fatalf("lamp.set before reload: %v", r)
	}
	newYAML := fmt.Sprintf(reloadBoard, data, port, 40, `actuators: [{name: lamp, kind: led, pins: {pin: "sim:5"}}]`)
	payload, _ := json.Marshal(map[string]any{"id": "reload", "op": "reload", "params": map[string]string{"yaml": newYAML}})
	if r := ask("admin", string(payload), "reload"); r["ok"] != true {
		t.Fatalf("reload refused: %v", r)
	}
	deadline := time.Now().Add(10 * time.Second)
	for current.Load() == n {
		if time.Now().After(deadline) {
			t.Fatal("node not rebuilt")
		}
		time.Sleep(10 * time.Millisecond)
	}
	<-current.Load().Ready()
	if r := ask("cmd", `{"id":"after","tool":"lamp.set","params":{"on":true}}`, "after"); r["ok"] != true {
		t.Fatalf("lamp.set after reload: %v", r)
	}
	if got := gcPercent(); got != 40 {
		t.Errorf("GC percent %d after reloading a board that asks for 40", got)
	}
	// A broken config is refused and the running one kept.
	bad, _ := json.Marshal(map[string]any{"id": "bad", "op": "reload", "params": map[string]string{"yaml": "device: {id: x, platform: mars}"}})
	if r := ask("admin", string(bad), "bad"); r["ok"] != false || !strings.Contains(fmt.Sprint(r["error"]), "platform") {
		t.Fatalf("broken reload: %v", r)
	}
}

// The board's GC target is applied when the board is read, unless GOGC
// is set.
func TestSetGCPercent(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	var cfg board.Config
	cfg.Agent.GCPercent = 10
	t.Setenv("GOGC", "")
	setGCPercent(&cfg)
	if got := gcPercent(); got != 10 {
		t.Fatalf("GC percent %d after a board asking for 10", got)
	}
	cfg.Agent.GCPercent = 100 // a reloaded board that sets none
	setGCPercent(&cfg)
	if got := gcPercent(); got != 100 {
		t.Fatalf("GC percent %d after a board asking for Go's default", got)
	}
	debug.SetGCPercent(10)
	t.Setenv("GOGC", "50")
	cfg.Agent.GCPercent = 25
	setGCPercent(&cfg)
	if got := gcPercent(); got != 10 {
		t.Fatalf("GC percent %d: the board overrode GOGC", got)
	}
}
