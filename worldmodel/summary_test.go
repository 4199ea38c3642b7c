package worldmodel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func goldenModel() *Model {
	m := New(Config{})
	m.Append(Observation{Source: "env.temperature", Kind: Reading, Value: 21.4375, Unit: "°C", Time: t0.Add(7 * time.Second)})
	m.Append(Observation{Source: "env.pressure", Kind: Reading, Value: 1013.25, Unit: "hPa", Time: t0.Add(-50 * time.Second)})
	m.Append(Observation{Source: "camera.snapshot", Kind: BlobRef, Blob: &Blob{MIME: "image/jpeg", Data: make([]byte, 34*1024+100)}, Time: t0.Add(9 * time.Second)})
	m.Append(Observation{Source: "mic.transcript", Kind: Text, Text: "turn on the\nheadlight", Time: t0.Add(-3 * time.Minute)})
	m.SetHealth("env", "degraded: i2c NACK")
	m.SetHealth("mic", "ok")
	m.SetActuator("headlight", "on")
	m.SetActuator("pan", "angle=90")
	m.Record(Event{Kind: "heartbeat", Priority: Low, Time: t0})
	m.Record(Event{Kind: "motion_start", Source: "camera", Priority: High, Message: "motion in 2 regions", Time: t0.Add(8 * time.Second)})
	m.Record(Event{Kind: "command", Source: "mqtt", Priority: Normal, Message: "turn on the headlight", Time: t0.Add(9 * time.Second)})
	return m
}

func TestSummaryGolden(t *testing.T) {
	now := t0.Add(10 * time.Second)
	for _, c := range []struct {
		budget int
		want   string
	}{
		{0, `sensors (4):
  camera.snapshot = image/jpeg 34 KB (1s ago)
  env.pressure = 1013 hPa (1m00s ago)
  env.temperature = 21.44 °C (3s ago)
  mic.transcript = "turn on the\nheadlight" (3m10s ago)
unhealthy (1):
  env: degraded: i2c NACK
actuators (2):
  headlight: on
  pan: angle=90
events (3, newest first):
  [normal] command from mqtt 1s ago: turn on the headlight
  [high] motion_start from camera 2s ago: motion in 2 regions
  [low] heartbeat 10s ago
`},
		// Health, actuators and urgent events come before sensors and
		// routine events when the budget is tight.
		{200, `unhealthy (1):
  env: degraded: i2c NACK
actuators (2):
  headlight: on
  pan: angle=90
events (3, newest first):
  [high] motion_start from camera 2s ago: motion in 2 regions
… 6 more
`},
		{60, `unhealthy (1):
  env: degraded: i2c NACK
… 9 more
`},
		{12, "… 10 more\n"},
		{11, ""},
	} {
		got := goldenModel().SummaryAt(now, c.budget)
		if got != c.want {
			t.Errorf("budget %d:\n%s\nwant:\n%s", c.budget, got, c.want)
		}
	}
	if got := New(Config{}).SummaryAt(now, 0); got != "nothing observed yet\n" {
		t.Errorf("empty model: %q", got)
	}
}

// randomModel builds a model from seed alone, so two calls give identical
// state.
func randomModel(seed uint64) *Model {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := New(Config{DefaultCapacity: 4, Events: 1 + rng.IntN(40)})
	words := []string{"motion", "wake_word", "estop", "threshold", "é", "日本語", "a\nb", "", strings.Repeat("long ", 50)}
	word := func() string { return words[rng.IntN(len(words))] }
	for range rng.IntN(30) {
		o := Observation{Source: fmt.Sprintf("s%d.%s", rng.IntN(20), word()), Time: t0.Add(-time.Duration(rng.Int64N(int64(72 * time.Hour))))}
		switch rng.IntN(4) {
		case 0:
			o.Kind, o.Text = Text, word()+word()
		case 1:
			o.Kind, o.Blob = BlobRef, &Blob{MIME: "image/jpeg", Data: make([]byte, rng.IntN(3<<20))}
		case 2:
			o.Kind, o.Event = EventRef, &Event{Kind: word(), Message: word()}
		default:
			o.Kind, o.Unit = Reading, word()
			o.Value = (rng.Float64() - 0.5) * math.Pow(10, float64(rng.IntN(24)-10))
		}
		m.Append(o)
	}
	for range rng.IntN(8) {
		m.SetActuator(word()+strconv.Itoa(rng.IntN(5)), word())
	}
	for range rng.IntN(8) {
		m.SetHealth(word()+strconv.Itoa(rng.IntN(5)), []string{"ok", "", "degraded: " + word()}[rng.IntN(3)])
	}
	for range rng.IntN(60) {
		m.Record(Event{Kind: word(), Source: word(), Priority: Priority(rng.IntN(4)), Message: word(), Time: t0.Add(-time.Duration(rng.Int64N(int64(time.Hour))))})
	}
	return m
}

// TestSummaryBudgetProperty checks, over random states and every budget up
// to the full length: never longer than the budget, byte-identical for
// identical state, only whole lines of the full summary, headers only over
// kept items, and a correct "… N more" line whenever one fits.
func TestSummaryBudgetProperty(t *testing.T) {
	now := t0
	for seed := range uint64(200) {
		m := randomModel(seed)
		full := m.SummaryAt(now, 0)
		if again := randomModel(seed).SummaryAt(now, 0); again != full {
			t.Fatalf("seed %d: identical state, different summaries:\n%s\n---\n%s", seed, full, again)
		}
		fullLines := lines(full)
		isLine := map[string]bool{}
		items := 0
		for _, l := range fullLines {
			isLine[l] = true
			if strings.HasPrefix(l, "  ") {
				items++
			}
		}
		for budget := 1; budget <= len(full)+1; budget += 1 + budget/8 {
			got := m.SummaryAt(now, budget)
			if len(got) > budget {
				t.Fatalf("seed %d budget %d: %d bytes:\n%s", seed, budget, len(got), got)
			}
			if got != m.SummaryAt(now, budget) {
				t.Fatalf("seed %d budget %d: not deterministic", seed, budget)
			}
			if items == 0 {
				continue
			}
			kept, more := 0, -1
			gotLines := lines(got)
			for i, l := range gotLines {
				switch {
				case strings.HasPrefix(l, "… "):
					if i != len(gotLines)-1 {
						t.Fatalf("seed %d budget %d: %q not last", seed, budget, l)
					}
					more, _ = strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(l, "… "), " more"))
				case !isLine[l]:
					t.Fatalf("seed %d budget %d: line %q not in the full summary:\n%s", seed, budget, l, full)
				case strings.HasPrefix(l, "  "):
					kept++
				case i+1 == len(gotLines) || !strings.HasPrefix(gotLines[i+1], "  "):
					t.Fatalf("seed %d budget %d: header %q without items:\n%s", seed, budget, l, got)
				}
			}
			switch omitted := items - kept; {
			case more >= 0 && more != omitted:
				t.Fatalf("seed %d budget %d: says %d more, %d were left out", seed, budget, more, omitted)
			case more < 0 && omitted > 0 && len(moreLine(items)) <= budget:
				t.Fatalf("seed %d budget %d: %d left out without saying so:\n%s", seed, budget, omitted, got)
			case kept == 0 && more < 0 && got != "":
				t.Fatalf("seed %d budget %d: %q", seed, budget, got)
			}
		}
	}
}

func lines(s string) []string {
	if s == "" {
		return nil
	}
	if !strings.HasSuffix(s, "\n") {
		panic("summary not newline-terminated: " + strconv.Quote(s))
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{
		0:          "0",
		21.4375:    "21.44",
		-21.4:      "-21.4",
		1013.25:    "1013",
		123456.78:  "123457",
		0.012345:   "0.01235",
		1:          "1",
		99.99999:   "100",
		0.00001234: "1.234e-05",
		1e20:       "1e+20",
		math.NaN(): "NaN",
	} {
		if got := formatValue(v); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestFormatAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                         "0s",
		400 * time.Millisecond:               "0.4s",
		3 * time.Second:                      "3s",
		42 * time.Second:                     "42s",
		5*time.Minute + 12*time.Second:       "5m12s",
		3*time.Hour + 5*time.Minute:          "3h05m",
		52 * time.Hour:                       "2d04h",
		9*time.Second + 990*time.Millisecond: "10s",
	} {
		if got := formatAge(d); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", d, got, want)
		}
	}
}
