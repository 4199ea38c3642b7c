package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
)

func boardWith(t *testing.T, dashboard string) *board.Config {
	t.Helper()
	path := filepath.Join(t.TempDir(), "b.yaml")
	if err := os.WriteFile(path, []byte("device: {id: bot, platform: sim}\ndashboard:\n"+dashboard), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := board.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestOptions(t *testing.T) {
	o, err := decodeOptions(boardWith(t, "  listen: 127.0.0.1:9090\n"), t.TempDir())
	if err != nil || o.Listen != "127.0.0.1:9090" || o.authRequired() || o.ClientBuffer != 256 {
		t.Fatalf("%+v %v", o, err)
	}
	for block, want := range map[string]string{
		"  listen: 0.0.0.0:8080\n":                                "not loopback: give users",
		"  listen: nonsense\n":                                    "want host:port",
		"  users: [{name: a, password_bcrypt: x, role: admin}]\n": "not a bcrypt hash",
		"  tokens: [{sha256: abc, role: viewer}]\n":               "64 hex digits",
		"  users: [{name: a, password_bcrypt: \"$2a$04$0123456789012345678901234567890123456789012345678901\", role: root}]\n": "want viewer or admin",
		"  tls: {cert: c.pem}\n": "both cert and key",
		"  client_buffer: 1\n":   "dashboard.client_buffer: want 16..65536",
		"  colour: red\n":        "unknown key",
	} {
		_, err := decodeOptions(boardWith(t, block), t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", block, err, want)
		}
	}
	// With users, a LAN address is fine.
	if _, err := decodeOptions(boardWith(t, "  listen: 0.0.0.0:8080\n  tokens: [{sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, role: admin}]\n"), t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

func TestRedact(t *testing.T) {
	y := redact([]byte("llm:\n  max_tokens: 77\nmqtt:\n  password: hunter2\n  users:\n    - {username: a, password_bcrypt: \"$2a$10$x\"}\ndashboard:\n  tokens: [{sha256: abc, role: admin}]\n  tls: {cert: c, key: k}\n"))
	for _, secret := range []string{"hunter2", "$2a$10$x", "abc"} {
		if strings.Contains(y, secret) {
			t.Errorf("redacted config still shows %q:\n%s", secret, y)
		}
	}
	if !strings.Contains(y, "max_tokens: 77") || (!strings.Contains(y, "username: a") && !strings.Contains(y, "username: \"a\"")) {
		t.Errorf("redaction removed more than secrets:\n%s", y)
	}
}
