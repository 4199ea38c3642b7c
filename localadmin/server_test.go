package localadmin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/edgeagent/edgeagent/tools"
)

// The test binary doubles as a client run as another user: with
// LOCALADMIN_TEST_DIR set it calls the socket there and prints the reply
// (or the error) as one JSON line.
func TestMain(m *testing.M) {
	if dir := os.Getenv("LOCALADMIN_TEST_DIR"); dir != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r, err := Call(ctx, dir, "estop.reset", nil)
		cancel()
		out := map[string]any{"reply": r}
		if err != nil {
			out["err"] = err.Error()
		}
		b, _ := json.Marshal(out)
		fmt.Println(string(b))
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

var quiet = slog.New(slog.DiscardHandler)

// serve listens in a fresh directory with one admin tool, estop.reset.
func serve(t *testing.T) (string, *Server, *int) {
	t.Helper()
	reg, err := tools.NewRegistry(tools.Options{Grants: map[string][]string{"cli": {"*"}}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	resets := new(int)
	if err := reg.Register("test", tools.Func(tools.Spec{Name: "estop.reset", Description: "release the latch", Permission: "admin"},
		func(context.Context, json.RawMessage) (tools.Result, error) {
			*resets++
			return tools.Result{Value: map[string]bool{"released": true}}, nil
		})); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	srv, err := Listen(dir, reg, quiet)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(context.Background()); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return dir, srv, resets
}

func TestCallsFromTheAgentsUser(t *testing.T) {
	dir, _, resets := serve(t)
	st, err := os.Stat(Path(dir))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Type() != fs.ModeSocket || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a socket with 0600", st.Mode())
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid != uint32(os.Geteuid()) {
		t.Fatalf("socket owned by uid %d, want the agent's %d", uid, os.Geteuid())
	}
	r, err := Call(t.Context(), dir, "estop.reset", nil)
	if err != nil || !r.OK || string(r.Result) != `{"released":true}` || *resets != 1 {
		t.Fatalf("reply %+v, err %v, resets %d", r, err, *resets)
	}
	r, err = Call(t.Context(), dir, "nope.nothing", nil)
	if err != nil || r.OK || r.Code != tools.CodeNotFound {
		t.Fatalf("unknown tool: %+v %v", r, err)
	}
	// Where no agent listens, the CLI is told so (and falls back to MQTT).
	if _, err := Call(t.Context(), t.TempDir(), "estop.reset", nil); err == nil || !strings.Contains(err.Error(), ErrNoAgent.Error()) {
		t.Fatalf("no agent: %v", err)
	}
}

func TestOnlyTheAgentsUserAndRoot(t *testing.T) {
	for _, tc := range []struct {
		peer, owner uint32
		ok          bool
	}{{1000, 1000, true}, {0, 1000, true}, {1001, 1000, false}, {65534, 0, false}, {0, 0, true}} {
		if allowed(tc.peer, tc.owner) != tc.ok {
			t.Errorf("peer %d, agent %d: allowed %v", tc.peer, tc.owner, !tc.ok)
		}
	}
}

// TestAnotherUserIsRefused runs a client as nobody (uid 65534): the 0600
// mode keeps it from connecting at all, and with the mode widened the peer
// check refuses it. It needs root to start a process as another user.
func TestAnotherUserIsRefused(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("starting a client as another user needs root; TestOnlyTheAgentsUserAndRoot covers the rule")
	}
	dir, srv, resets := serve(t)
	// nobody may walk to the socket; the socket's own mode is the door.
	for d := dir; d != filepath.Dir(os.TempDir()) && d != "/"; d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A copy of the test binary nobody may run (go test's build folder is
	// root's alone).
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(filepath.Dir(dir), "client.test")
	if err := os.WriteFile(client, self, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func() map[string]any {
		t.Helper()
		cmd := exec.Command(client, "-test.run=^$")
		cmd.Env = append(os.Environ(), "LOCALADMIN_TEST_DIR="+dir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("client as nobody: %v", err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("client output %q: %v", out, err)
		}
		return got
	}
	got := asNobody()
	if e, _ := got["err"].(string); !strings.Contains(e, "not yours") {
		t.Fatalf("mode 0600: %v", got)
	}
	if err := os.Chmod(Path(dir), 0o666); err != nil {
		t.Fatal(err)
	}
	got = asNobody()
	rep, _ := got["reply"].(map[string]any)
	if rep["ok"] != false || rep["code"] != tools.CodeForbidden || srv.Refused() != 1 {
		t.Fatalf("mode widened: %v (refused %d)", got, srv.Refused())
	}
	if *resets != 0 {
		t.Fatalf("another user's call ran (%d resets)", *resets)
	}
}
