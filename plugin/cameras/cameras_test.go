package cameras

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/plugin"
)

// boardHost is a plugin.Host whose only answer is its board: Of reads
// nothing else.
type boardHost struct {
	plugin.Host
	b *board.Config
}

func (h boardHost) Board() *board.Config { return h.b }

func TestOfKeepsEnabledCamerasInBoardOrder(t *testing.T) {
	b := &board.Config{Sensors: []board.Sensor{
		{Name: "front", Kind: "camera", Enabled: true},
		{Name: "light", Kind: "bh1750", Enabled: true},
		{Name: "spare", Kind: "camera", Enabled: false},
		{Name: "back", Kind: "camera", Enabled: true},
	}}
	if got := Of(boardHost{b: b}); !slices.Equal(got, Set{"front", "back"}) {
		t.Fatalf("Of = %q", got)
	}
	if got := Of(boardHost{b: &board.Config{}}); len(got) != 0 {
		t.Fatalf("a board without cameras: %q", got)
	}
}

func TestTouches(t *testing.T) {
	got := Set{"front", "back"}.Touches(".snapshot", ".description")
	want := []string{"front.snapshot", "front.description", "back.snapshot", "back.description"}
	if !slices.Equal(got, want) {
		t.Fatalf("Touches = %q, want %q", got, want)
	}
}

func TestSpecHasTheCameraArgument(t *testing.T) {
	spec := Set{"front", "back"}.Spec("camera.look", "Look.", `"zoom": {"type": "number"}`, ".snapshot")
	if spec.Name != "camera.look" || spec.Permission != "read" || !slices.Equal(spec.Touches, []string{"front.snapshot", "back.snapshot"}) {
		t.Fatalf("spec %+v", spec)
	}
	var params struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		AdditionalProperties *bool `json:"additionalProperties"`
	}
	if err := json.Unmarshal(spec.Params, &params); err != nil {
		t.Fatalf("%v in %s", err, spec.Params)
	}
	if c := params.Properties["camera"]; c.Type != "string" || !slices.Equal(c.Enum, []string{"front", "back"}) {
		t.Fatalf("camera property %+v", c)
	}
	if params.Type != "object" || params.Properties["zoom"].Type != "number" || params.AdditionalProperties == nil || *params.AdditionalProperties {
		t.Fatalf("params %s", spec.Params)
	}
	if spec := (Set{"front"}).Spec("camera.look", "Look.", "", ".snapshot"); !json.Valid(spec.Params) {
		t.Fatalf("no props of its own: %s", spec.Params)
	}
}

func TestPick(t *testing.T) {
	one, two := Set{"front"}, Set{"front", "back"}
	for _, tc := range []struct {
		s          Set
		name, want string
		err        string
	}{
		{one, "", "front", ""},
		{one, "front", "front", ""},
		{two, "back", "back", ""},
		{two, "", "", "this board has 2 cameras ([front back]): say which"},
		{two, "side", "", `no camera "side" (cameras: [front back])`},
		{Set{}, "", "", "this board has 0 cameras"},
	} {
		got, err := tc.s.Pick(tc.name)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q.Pick(%q) = %q, %v; want error %q", tc.s, tc.name, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q.Pick(%q) = %q, %v; want %q", tc.s, tc.name, got, err, tc.want)
		}
	}
}
