package store

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLogAppend is one audit record (about 300 bytes of JSON)
// appended and made durable: the audit writer's cost per record.
func BenchmarkLogAppend(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "s.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	v := json.RawMessage(`{"time":"2026-11-26T03:00:00Z","caller":"mqtt","tool":"headlight.set","actuator":"headlight","requested":{"on":true},"applied":{"on":true},"result":"ok","notes":["` + strings.Repeat("x", 120) + `"]}`)
	for b.Loop() {
		if _, err := s.Append("audit", v, 0); err != nil {
			b.Fatal(err)
		}
	}
}
