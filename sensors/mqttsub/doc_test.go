package mqttsub

import (
	"os"
	"strings"
	"testing"

	"github.com/edgeagent/edgeagent/sensors/sensortest"
)

// The examples of docs/add-a-sensor.md section 8 are valid blocks.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/add-a-sensor.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(doc), "## 8. Sensors over MQTT")
	if !ok {
		t.Fatal("section 8 missing")
	}
	n := 0
	for _, part := range strings.Split(sec, "```yaml\n")[1:] {
		block, _, _ := strings.Cut(part, "```")
		block, _, _ = strings.Cut(block, "reflexes:")
		if !strings.Contains(block, "kind: mqtt") || strings.Contains(block, "[...]") {
			continue
		}
		cfg, err := sensortest.ParseBoard("sim", block)
		if err == nil {
			_, err = New(cfg)
		}
		if err != nil {
			t.Errorf("%v\n%s", err, block)
		}
		n++
	}
	if n != 3 {
		t.Errorf("%d examples checked, want 3", n)
	}
}
