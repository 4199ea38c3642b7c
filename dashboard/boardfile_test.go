package dashboard

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// The tuning is written into the board file's own text: the keys it sets
// are there (replaced, or added with the levels they need), and every
// comment and other key stays.
func TestTunedFileKeepsTheFile(t *testing.T) {
	const text = `# my robot
device: {id: bot, platform: sim}
sensors:
  - name: env            # the first sensor
    kind: bme280
  - name: cam
    kind: camera
    options:
      source: sim        # no hardware yet
      motion:
        threshold: 30    # tuned by hand
        off_delay: 5s
  - name: back
    kind: camera
`
	path := filepath.Join(t.TempDir(), "board.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	thr, area := 42, 80
	out, err := tunedFile(path, "cam", tuning{Threshold: &thr, MinArea: &area, Masks: []string{"0.1,0.1,0.5,0.1,0.5,0.5"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# my robot", "# the first sensor", "# no hardware yet", "off_delay: 5s"} {
		if !strings.Contains(out, want) {
			t.Errorf("%q lost:\n%s", want, out)
		}
	}
	// A camera without options gets the levels it needs.
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = tunedFile(path, "back", tuning{Threshold: &thr})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sensors []struct {
			Name    string
			Options struct {
				Motion struct {
					Threshold int      `yaml:"threshold"`
					MinArea   int      `yaml:"min_area"`
					OffDelay  string   `yaml:"off_delay"`
					Masks     []string `yaml:"masks"`
				}
			}
		}
	}
	if err := yaml.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	cam, back := doc.Sensors[1].Options.Motion, doc.Sensors[2].Options.Motion
	if cam.Threshold != 42 || cam.MinArea != 80 || cam.OffDelay != "5s" || len(cam.Masks) != 1 || back.Threshold != 42 {
		t.Fatalf("cam %+v, back %+v:\n%s", cam, back, out)
	}
	if _, err := tunedFile(path, "front", tuning{Threshold: &thr}); err == nil || !strings.Contains(err.Error(), "camera front is not in the board file") {
		t.Fatalf("unknown camera: %v", err)
	}
}
