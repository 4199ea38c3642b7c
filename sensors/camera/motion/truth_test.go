package motion

import (
	"image"
	"strings"
	"testing"
)

func TestReadTruth(t *testing.T) {
	got, err := ReadTruth(strings.NewReader(`[{"frame": 3, "boxes": [[1,2,10,20]]}, {"frame": 4, "boxes": []}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[3]) != 1 || got[3][0] != image.Rect(1, 2, 10, 20) || got[4] == nil || len(got[4]) != 0 {
		t.Fatalf("got %v", got)
	}
	for _, c := range []struct{ in, want string }{
		{`{"frame": 1}`, "is a JSON object"},
		{`[{"frame": 1, "boxes": [[5,5,5,9]]}]`, "box 0 [5 5 5 9] is empty"},
		{`[{"frame": -1, "boxes": []}]`, "negative"},
		{`[{"frame": 1, "boxes": []}, {"frame": 1, "boxes": []}]`, "listed twice"},
		{`[{"frame": 1, "box": []}]`, "unknown field"},
		{`secret-content-xyz`, "not JSON"},
	} {
		_, err := ReadTruth(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.in, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error echoes the file: %v", err)
		}
	}
}
