package hooks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// life returns a plugin that records its start and stop and fails them on
// demand.
func life(rec *recorder, in Info, startErr, stopErr error) *plug {
	return &plug{
		info:  in,
		start: func(context.Context) error { rec.Append("start " + in.Name); return startErr },
		stop:  func(context.Context) error { rec.Append("stop " + in.Name); return stopErr },
	}
}

// stopOnly implements nothing but Stopper: it went through start (there was
// nothing to do) and is still owed a stop.
type stopOnly struct {
	info Info
	rec  *recorder
}

func (s *stopOnly) Info() Info { return s.info }
func (s *stopOnly) OnAgentStop(context.Context) error {
	s.rec.Append("stop " + s.info.Name)
	return nil
}

func TestStartStop(t *testing.T) {
	errStop := errors.New("motor did not park")
	tests := []struct {
		name          string
		failStart     string // plugin whose start fails
		failStop      []string
		wantStart     []string // events during Start
		wantStop      []string // events during Stop
		wantStartErr  string
		wantStopErrIn []string
	}{
		{
			name:      "in order, stop in reverse",
			wantStart: []string{"start base", "start camera", "start vision"},
			wantStop:  []string{"stop vision", "stop flush", "stop camera", "stop base"},
		},
		{
			name:         "start failure rolls back the started ones",
			failStart:    "vision",
			wantStart:    []string{"start base", "start camera", "start vision", "stop flush", "stop camera", "stop base"},
			wantStop:     nil, // nothing is running
			wantStartErr: `plugin "vision": on_agent_start: no device`,
		},
		{
			name:         "first plugin fails: nothing to roll back",
			failStart:    "base",
			wantStart:    []string{"start base"},
			wantStartErr: `plugin "base": on_agent_start: no device`,
		},
		{
			name:          "every stop runs, errors joined",
			failStop:      []string{"vision", "base"},
			wantStart:     []string{"start base", "start camera", "start vision"},
			wantStop:      []string{"stop vision", "stop flush", "stop camera", "stop base"},
			wantStopErrIn: []string{`plugin "vision": on_agent_stop: motor did not park`, `plugin "base": on_agent_stop`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			mk := func(in Info) Plugin {
				var se, te error
				if in.Name == tt.failStart {
					se = errors.New("no device")
				}
				if slices.Contains(tt.failStop, in.Name) {
					te = errStop
				}
				return life(&rec, in, se, te)
			}
			m := newManager(t,
				mk(Info{Name: "vision", Priority: 10, DependsOn: []string{"camera"}}),
				mk(Info{Name: "camera"}),
				mk(Info{Name: "base", Priority: 5}),
				&stopOnly{info: Info{Name: "flush", RunAfter: []string{"camera"}, RunBefore: []string{"vision"}}, rec: &rec},
			)
			err := m.Start(context.Background())
			if tt.wantStartErr == "" && err != nil || tt.wantStartErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantStartErr)) {
				t.Fatalf("Start: got %v, want %q", err, tt.wantStartErr)
			}
			if err != nil {
				var f Failure
				if !errors.As(err, &f) || f.Plugin != tt.failStart || f.Stage != HookAgentStart {
					t.Errorf("Start error %v is not a Failure naming %q", err, tt.failStart)
				}
			}
			if got := rec.All(); !slices.Equal(got, tt.wantStart) {
				t.Fatalf("Start events: got %v, want %v", got, tt.wantStart)
			}
			rec = recorder{}
			err = m.Stop(context.Background())
			for _, w := range tt.wantStopErrIn {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Stop error %v does not contain %q", err, w)
				}
			}
			if tt.wantStopErrIn == nil && err != nil {
				t.Errorf("Stop: %v", err)
			}
			if got := rec.All(); !slices.Equal(got, tt.wantStop) {
				t.Fatalf("Stop events: got %v, want %v", got, tt.wantStop)
			}
			// Stopping twice stops nothing twice.
			rec = recorder{}
			if err := m.Stop(context.Background()); err != nil || len(rec.All()) != 0 {
				t.Fatalf("second Stop: %v, events %v", err, rec.All())
			}
		})
	}
}

func TestStartTwice(t *testing.T) {
	m := newManager(t)
	if err := m.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err == nil {
		t.Fatal("second Start succeeded")
	}
	if err := m.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(context.Background()); err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
}

func TestStartPanics(t *testing.T) {
	var rec recorder
	m := newManager(t,
		life(&rec, Info{Name: "a", Priority: 1}, nil, nil),
		&plug{info: Info{Name: "b"}, start: func(context.Context) error { panic("init bug") }},
	)
	err := m.Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), `plugin "b": on_agent_start: panic: init bug`) {
		t.Fatalf("got %v", err)
	}
	if got, want := rec.All(), []string{"start a", "stop a"}; !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestLoadUnload(t *testing.T) {
	var rec recorder
	ctx := context.Background()
	m := newManager(t, life(&rec, Info{Name: "base"}, nil, nil))

	// Not running: Load is Add, Unload is Remove.
	if err := m.Load(ctx, life(&rec, Info{Name: "early"}, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if err := m.Unload(ctx, "early"); err != nil {
		t.Fatal(err)
	}
	if got := rec.All(); len(got) != 0 {
		t.Fatalf("hooks ran while not running: %v", got)
	}

	if err := m.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Load(ctx, life(&rec, Info{Name: "arm", DependsOn: []string{"base"}}, nil, nil)); err != nil {
		t.Fatal(err)
	}
	// A plugin that fails to start is not left behind.
	if err := m.Load(ctx, life(&rec, Info{Name: "lidar"}, errors.New("no port"), nil)); err == nil {
		t.Fatal("Load with failing start succeeded")
	}
	if _, ok := m.Get("lidar"); ok {
		t.Fatal("failed Load left the plugin loaded")
	}
	// Added without Load while running: not started, so not stopped.
	if err := m.Add(life(&rec, Info{Name: "quiet"}, nil, nil)); err != nil {
		t.Fatal(err)
	}
	if err := m.Unload(ctx, "base"); err == nil {
		t.Fatal("Unload of a dependency succeeded")
	}
	if err := m.Unload(ctx, "arm"); err != nil {
		t.Fatal(err)
	}
	if err := m.Unload(ctx, "arm"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second Unload: got %v", err)
	}
	if err := m.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	want := []string{"start base", "start arm", "start lidar", "stop arm", "stop base"}
	if got := rec.All(); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
