package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"2026-02-01T10:00:00Z": time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC),
		"2h":                   now.Add(-2 * time.Hour),
		"2026-02-03":           time.Date(2026, 2, 3, 0, 0, 0, 0, time.Local),
	} {
		if got, err := parseWhen("--since", in, now); err != nil || !got.Equal(want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-2h", "2026-13-01"} {
		if _, err := parseWhen("--since", bad, now); err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v (want an error that does not echo the value)", bad, err)
		}
	}
}

// TestAuditCommandWindow: `edgeagent audit --since --until --json` on a
// stopped agent's store, routine and safety entries merged.
func TestAuditCommandWindow(t *testing.T) {
	dir := t.TempDir()
	boardPath := filepath.Join(dir, "b.yaml")
	if err := os.WriteFile(boardPath, []byte("device: {id: aud, platform: sim}\ndata_dir: "+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(filepath.Join(dir, "edgeagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for i := range 6 {
		e := actuator.Entry{Time: t0.Add(time.Duration(i) * time.Hour), Caller: "mqtt", Tool: "lamp.set", Actuator: "lamp", Result: "ok"}
		bucket := actuator.AuditBucket
		if i%2 == 1 {
			e.Result, bucket = "refused", actuator.SafetyBucket
		}
		if i == 2 { // a group's command
			e.Via = &tools.Via{Kind: tools.ViaGroup, Name: "north", Topic: "edgeagent/group/north/cmd"}
		}
		if _, err := st.Append(bucket, e, 0); err != nil {
			t.Fatal(err)
		}
	}
	_ = st.Close()
	var out bytes.Buffer
	rootCmd.SetOut(&out)
	rootCmd.SetArgs([]string{"audit", "--board", boardPath, "--json",
		"--since", t0.Add(time.Hour).Format(time.RFC3339), "--until", t0.Add(4 * time.Hour).Format(time.RFC3339)})
	defer rootCmd.SetArgs(nil)
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	var got []actuator.Entry
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var results []string
	for _, e := range got {
		results = append(results, fmt.Sprintf("%v %s", e.Time.Sub(t0).Hours(), e.Result))
	}
	if strings.Join(results, ",") != "1 refused,2 ok,3 refused" || got[1].Via == nil || got[1].Via.Name != "north" {
		t.Fatalf("entries %v, the group's %+v", results, got[1].Via)
	}
	// The table says where a command came from beside its caller.
	out.Reset()
	rootCmd.SetArgs([]string{"audit", "--board", boardPath, "--json=false", "--since=", "--until="})
	if err := rootCmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if strings.Count(out.String(), "mqtt · group north") != 1 || strings.Count(out.String(), "mqtt ") != 6 {
		t.Fatalf("the table:\n%s", out.String())
	}
}
