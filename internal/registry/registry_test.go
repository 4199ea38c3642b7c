package registry

import (
	"slices"
	"sync"
	"testing"
)

func TestRegistry(t *testing.T) {
	r := New[int]("test: thing")
	if _, ok := r.Lookup("a"); ok || len(r.Names()) != 0 {
		t.Fatal("an empty registry has something")
	}
	var wg sync.WaitGroup
	for i, name := range []string{"c", "a", "b"} {
		wg.Go(func() { r.Register(name, i) })
	}
	wg.Wait()
	if got := r.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("Names = %q", got)
	}
	if v, ok := r.Lookup("a"); !ok || v != 1 {
		t.Fatalf("Lookup(a) = %d, %v", v, ok)
	}
	defer func() {
		if p := recover(); p != "test: thing registered twice: b" {
			t.Fatalf("panic %v", p)
		}
	}()
	r.Register("b", 9)
	t.Fatal("a name registered twice did not panic")
}

func TestShared(t *testing.T) {
	made := 0
	s := NewShared(func(name string) *string { made++; return &name })
	a, b := s.Get("a"), s.Get("b")
	if *a != "a" || *b != "b" || s.Get("a") != a || made != 2 {
		t.Fatalf("a=%q b=%q, made %d", *a, *b, made)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _ = s.Get("c") })
	}
	wg.Wait()
	if made != 3 {
		t.Fatalf("%d made after concurrent first uses of c, want 3", made)
	}
}

func TestMissingNamesTheProfile(t *testing.T) {
	r := New[int](SensorKind)
	r.Register("camera", 1)
	if got := r.Missing("lidar"); got != "unknown (known: camera)" {
		t.Fatalf("no profiles: %q", got)
	}
	UseProfiles("robot", func(what, name string) []string {
		if what == SensorKind && name == "lidar" {
			return []string{"full"}
		}
		return nil
	})
	defer UseProfiles("", nil)
	if got := r.Missing("lidar"); got != "not in this binary (build profile robot); build profile full has it" {
		t.Fatalf("lidar: %q", got)
	}
	if got := r.Missing("sonar"); got != "unknown (known: camera)" {
		t.Fatalf("a name no profile holds: %q", got)
	}
}
