package store

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// Both stores behave the same to their callers: whatever runs on Memory in
// tests runs on Bolt on the robot.
func TestStoresShareTheContract(t *testing.T) {
	for name, open := range map[string]func(t *testing.T) Store{
		"bolt": func(t *testing.T) Store {
			s, err := Open(filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
		// segments of a record or two: the log's files roll and go whole
		"bolt, small segments": func(t *testing.T) Store { return openBolt(t, filepath.Join(t.TempDir(), "s.db"), 40) },
		"memory":               func(*testing.T) Store { return NewMemory() },
	} {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			defer s.Close()
			if err := s.PutMany("b", map[string]any{"y": 2, "x": 1}); err != nil {
				t.Fatal(err)
			}
			var keys []string
			_ = s.ForEach("b", func(k string, _ json.RawMessage) error { keys = append(keys, k); return nil })
			if len(keys) != 2 || keys[0] != "x" || keys[1] != "y" {
				t.Fatalf("ForEach order %v", keys)
			}
			var n int
			if ok, err := s.Get("b", "y", &n); !ok || err != nil || n != 2 {
				t.Fatalf("Get y = %d %v %v", n, ok, err)
			}
			var wrong struct{ A int }
			if ok, err := s.Get("b", "y", &wrong); !ok || err == nil {
				t.Fatalf("decoding a number into a struct: ok=%v err=%v", ok, err)
			}
			if err := s.Delete("b", "y"); err != nil {
				t.Fatal(err)
			}
			if ok, _ := s.Get("b", "y", &n); ok {
				t.Fatal("deleted key still present")
			}
			if err := s.Update("b", map[string]any{"z": 3}, []string{"x", "missing"}); err != nil {
				t.Fatal(err)
			}
			keys = nil
			_ = s.ForEach("b", func(k string, _ json.RawMessage) error { keys = append(keys, k); return nil })
			if len(keys) != 1 || keys[0] != "z" {
				t.Fatalf("after Update: keys %v", keys)
			}
			if err := s.Put("b", "bad", func() {}); err == nil {
				t.Fatal("an unencodable value was stored")
			}
			for i := 1; i <= 25; i++ {
				seq, err := s.Append("log", i, 10)
				if err != nil || seq != uint64(i) {
					t.Fatalf("Append %d: seq %d, %v", i, seq, err)
				}
			}
			var seqs []uint64
			var vals []int
			_ = s.Tail("log", 100, func(seq uint64, v json.RawMessage) error {
				var n int
				_ = json.Unmarshal(v, &n)
				seqs, vals = append(seqs, seq), append(vals, n)
				return nil
			})
			if len(seqs) != 10 || seqs[0] != 16 || vals[9] != 25 {
				t.Fatalf("bounded log holds seqs %v vals %v", seqs, vals)
			}
			if n, b, err := s.LogSize("log"); err != nil || n != 10 || b != 20 { // "16" … "25"
				t.Fatalf("LogSize = %d entries, %d bytes, %v", n, b, err)
			}
			n, b, err := s.Evict("log", func(seq uint64, v json.RawMessage) bool { return seq < 19 })
			if err != nil || n != 3 || b != 6 {
				t.Fatalf("Evict = %d entries, %d bytes, %v", n, b, err)
			}
			if n, _, _ := s.LogSize("log"); n != 7 {
				t.Fatalf("%d entries after Evict", n)
			}
			if n, _, err := s.Evict("nolog", func(uint64, json.RawMessage) bool { return true }); n != 0 || err != nil {
				t.Fatalf("Evict of a missing bucket: %d %v", n, err)
			}
			seqs = nil
			_ = s.Tail("log", 3, func(seq uint64, _ json.RawMessage) error { seqs = append(seqs, seq); return nil })
			if len(seqs) != 3 || seqs[0] != 23 || seqs[2] != 25 {
				t.Fatalf("tail %v", seqs)
			}
			if n, b, err := s.Evict("log", func(uint64, json.RawMessage) bool { return true }); err != nil || n != 7 || b != 14 {
				t.Fatalf("Evict of everything = %d entries, %d bytes, %v", n, b, err)
			}
			if n, b, err := s.LogSize("log"); err != nil || n != 0 || b != 0 {
				t.Fatalf("LogSize of an evicted log = %d, %d, %v", n, b, err)
			}
			if seq, err := s.Append("log", 26, 10); err != nil || seq != 26 {
				t.Fatalf("Append after evicting everything: seq %d, %v", seq, err)
			}
			_ = s.Tail("nolog", 5, func(uint64, json.RawMessage) error { t.Fatal("a missing log has entries"); return nil })
		})
	}
}
