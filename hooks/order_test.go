package hooks

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestOrdering(t *testing.T) {
	tests := []struct {
		name  string
		infos []Info
		want  []string
	}{
		{
			name:  "higher priority first",
			infos: []Info{{Name: "a"}, {Name: "b", Priority: 5}, {Name: "c", Priority: 5}},
			want:  []string{"b", "c", "a"},
		},
		{
			name:  "equal priority by name",
			infos: []Info{{Name: "c"}, {Name: "a"}, {Name: "b"}},
			want:  []string{"a", "b", "c"},
		},
		{
			name:  "dependency beats priority",
			infos: []Info{{Name: "low"}, {Name: "high", Priority: 10, DependsOn: []string{"low"}}},
			want:  []string{"low", "high"},
		},
		{
			name: "priority decides only among ready plugins",
			// high waits for a; c is ready alongside a and outranks it.
			infos: []Info{{Name: "a"}, {Name: "high", Priority: 10, DependsOn: []string{"a"}}, {Name: "c", Priority: 5}},
			want:  []string{"c", "a", "high"},
		},
		{
			name:  "dependency chain",
			infos: []Info{{Name: "c", DependsOn: []string{"b"}}, {Name: "b", DependsOn: []string{"a"}}, {Name: "a", Priority: -1}},
			want:  []string{"a", "b", "c"},
		},
		{
			name:  "run_after present",
			infos: []Info{{Name: "a", RunAfter: []string{"b"}}, {Name: "b", Priority: -5}},
			want:  []string{"b", "a"},
		},
		{
			name:  "run_after absent is ignored",
			infos: []Info{{Name: "b", RunAfter: []string{"zz"}}, {Name: "a", Priority: -1}},
			want:  []string{"b", "a"},
		},
		{
			name: "run_before present",
			// a outranks b but waits for c; c does not inherit a's priority.
			infos: []Info{{Name: "a", Priority: 3}, {Name: "b"}, {Name: "c", RunBefore: []string{"a"}}},
			want:  []string{"b", "c", "a"},
		},
		{
			name:  "run_before absent is ignored",
			infos: []Info{{Name: "a"}, {Name: "c", RunBefore: []string{"zz"}}},
			want:  []string{"a", "c"},
		},
		{
			name: "mixed constraints",
			infos: []Info{
				{Name: "safety", Priority: 100},
				{Name: "perm", Priority: 50, RunAfter: []string{"safety"}},
				{Name: "audit", Priority: -10, DependsOn: []string{"store"}},
				{Name: "store"},
				{Name: "enrich", RunBefore: []string{"store"}},
			},
			want: []string{"safety", "perm", "enrich", "store", "audit"},
		},
		{
			name:  "duplicate constraints are harmless",
			infos: []Info{{Name: "a"}, {Name: "b", DependsOn: []string{"a", "a"}, RunAfter: []string{"a"}}},
			want:  []string{"a", "b"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The order must not depend on the order plugins are given in.
			for _, perm := range permutations(len(tt.infos)) {
				ps := make([]Plugin, len(perm))
				for i, j := range perm {
					ps[i] = &plug{info: tt.infos[j]}
				}
				m := newManager(t, ps...)
				if got := names(m.Plugins()); !slices.Equal(got, tt.want) {
					t.Fatalf("input order %v: got %v, want %v", perm, got, tt.want)
				}
			}
		})
	}
}

// Adding one at a time (dependencies first) gives the same order as AddAll,
// and a soft constraint takes effect as soon as its target arrives.
func TestOrderingIncremental(t *testing.T) {
	m := NewManager(quiet())
	mustAdd := func(in Info) {
		t.Helper()
		if err := m.Add(&plug{info: in}); err != nil {
			t.Fatal(err)
		}
	}
	mustAdd(Info{Name: "a", RunAfter: []string{"z"}})
	mustAdd(Info{Name: "b"})
	if got, want := names(m.Plugins()), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	mustAdd(Info{Name: "z"})
	if got, want := names(m.Plugins()), []string{"b", "z", "a"}; !slices.Equal(got, want) {
		t.Fatalf("after z: got %v, want %v", got, want)
	}
	if err := m.Remove("z"); err != nil {
		t.Fatal(err)
	}
	if got, want := names(m.Plugins()), []string{"a", "b"}; !slices.Equal(got, want) {
		t.Fatalf("after removing z: got %v, want %v", got, want)
	}
}

func TestAddErrors(t *testing.T) {
	tests := []struct {
		name    string
		loaded  []Info // added one by one first, must succeed
		add     []Info // then added with AddAll, must fail
		wantErr string
	}{
		{
			name:    "empty name",
			add:     []Info{{}},
			wantErr: "empty name",
		},
		{
			name:    "duplicate of loaded",
			loaded:  []Info{{Name: "a"}},
			add:     []Info{{Name: "a"}},
			wantErr: `plugin "a" is already loaded`,
		},
		{
			name:    "duplicate within batch",
			add:     []Info{{Name: "a"}, {Name: "a"}},
			wantErr: `plugin "a" is already loaded`,
		},
		{
			name:    "missing dependency",
			loaded:  []Info{{Name: "a"}},
			add:     []Info{{Name: "b", DependsOn: []string{"a", "camera"}}},
			wantErr: `plugin "b" depends on "camera", which is not loaded`,
		},
		{
			name:    "hard cycle",
			add:     []Info{{Name: "b", DependsOn: []string{"a"}}, {Name: "a", DependsOn: []string{"b"}}},
			wantErr: "ordering cycle: a -> b -> a (a depends_on b; b depends_on a)",
		},
		{
			name:    "self dependency",
			add:     []Info{{Name: "a", DependsOn: []string{"a"}}},
			wantErr: "ordering cycle: a -> a (a depends_on a)",
		},
		{
			name:    "soft cycle closed by a later plugin",
			loaded:  []Info{{Name: "a", RunAfter: []string{"b"}}},
			add:     []Info{{Name: "b", RunAfter: []string{"a"}}},
			wantErr: "ordering cycle: a -> b -> a (a run_after b; b run_after a)",
		},
		{
			name:    "run_before cycle",
			loaded:  []Info{{Name: "a", RunBefore: []string{"b"}}},
			add:     []Info{{Name: "b", RunBefore: []string{"a"}}},
			wantErr: "ordering cycle: a -> b -> a (b run_before a; a run_before b)",
		},
		{
			name: "cycle with stuck dependents",
			loaded: []Info{
				{Name: "x"},
				{Name: "c", DependsOn: []string{"x"}, RunAfter: []string{"a"}},
				{Name: "b", RunBefore: []string{"a"}},
			},
			add:     []Info{{Name: "d", DependsOn: []string{"c"}}, {Name: "a", Priority: 9, RunBefore: []string{"b"}}},
			wantErr: "ordering cycle: a -> b -> a (b run_before a; a run_before b)",
		},
		{
			name:    "three-cycle mixing kinds",
			add:     []Info{{Name: "c", RunAfter: []string{"a"}}, {Name: "b", RunAfter: []string{"c"}}, {Name: "a", DependsOn: []string{"b"}}},
			wantErr: "ordering cycle: a -> b -> c -> a (a depends_on b; b run_after c; c run_after a)",
		},
		{
			name: "three-cycle",
			loaded: []Info{
				{Name: "a", RunAfter: []string{"b"}},
				{Name: "b", RunAfter: []string{"c"}},
			},
			add:     []Info{{Name: "c", RunAfter: []string{"a"}}},
			wantErr: "ordering cycle: a -> b -> c -> a (a run_after b; b run_after c; c run_after a)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewManager(quiet())
			for _, in := range tt.loaded {
				if err := m.Add(&plug{info: in}); err != nil {
					t.Fatalf("setup Add(%s): %v", in.Name, err)
				}
			}
			before := names(m.Plugins())
			var ps []Plugin
			for _, in := range tt.add {
				ps = append(ps, &plug{info: in})
			}
			err := m.AddAll(ps...)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
			}
			if after := names(m.Plugins()); !slices.Equal(before, after) {
				t.Fatalf("failed add changed the plugins: %v -> %v", before, after)
			}
		})
	}
}

func TestAddNil(t *testing.T) {
	if err := NewManager(quiet()).Add(nil); err == nil {
		t.Fatal("Add(nil) succeeded")
	}
}

func TestRemove(t *testing.T) {
	m := newManager(t,
		&plug{info: Info{Name: "store"}},
		&plug{info: Info{Name: "b", DependsOn: []string{"store"}}},
		&plug{info: Info{Name: "a", DependsOn: []string{"store"}}},
		&plug{info: Info{Name: "soft", RunAfter: []string{"store"}}},
	)
	err := m.Remove("store")
	if err == nil || !strings.Contains(err.Error(), `remove "store": loaded plugins depend on it: a, b`) {
		t.Fatalf("Remove with dependents: got %v", err)
	}
	if _, ok := m.Get("store"); !ok {
		t.Fatal("refused Remove still removed the plugin")
	}
	if err := m.Remove("nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Remove unknown: got %v, want ErrNotFound", err)
	}
	for _, n := range []string{"a", "b", "store"} { // soft constraints do not block
		if err := m.Remove(n); err != nil {
			t.Fatalf("Remove(%s): %v", n, err)
		}
	}
	if got := names(m.Plugins()); !slices.Equal(got, []string{"soft"}) {
		t.Fatalf("left: %v", got)
	}
	if _, ok := m.Get("store"); ok {
		t.Fatal("Get found a removed plugin")
	}
	// The name can be reused.
	if err := m.Add(&plug{info: Info{Name: "store"}}); err != nil {
		t.Fatal(err)
	}
}

// The Manager keeps its own copy of Info, so a plugin reusing the slices
// cannot reorder itself behind the Manager's back.
func TestInfoIsCopied(t *testing.T) {
	deps := []string{"a"}
	m := newManager(t, &plug{info: Info{Name: "a"}}, &plug{info: Info{Name: "b", DependsOn: deps}})
	deps[0] = "zzz"
	if err := m.Remove("a"); err == nil {
		t.Fatal("Remove(a) succeeded although b depends on it")
	}
}

func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := slices.Insert(slices.Clone(p), i, n-1)
			out = append(out, q)
		}
	}
	return out
}
