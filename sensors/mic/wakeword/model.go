package wakeword

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"time"

	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

// MinTakes is how many recordings of the phrase enrolment needs. One take
// cannot tell the detector how much the phrase varies; three can.
const MinTakes = 3

// Model is one enrolled wake word: the user's takes of the phrase, trimmed
// of silence. Takes are kept as audio, not features, because detection
// re-mixes them with the live background noise (see bank.go).
type Model struct {
	Name  string
	Takes [][]int16 // 16 kHz mono, trimmed
}

// manifest is the JSON file beside the takes.
type manifest struct {
	Name    string    `json:"name"`
	Takes   []string  `json:"takes"`
	Created time.Time `json:"created"`
	// Spread is the mean DTW distance between the takes at enrolment;
	// informative only (the detector recomputes it per noise condition).
	Spread float64 `json:"spread"`
}

const manifestFile = "wakeword.json"

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9_\-]{0,63}$`)

// Enroll builds a model from recordings of the phrase: each is trimmed to
// its speech, and takes that are too short, too long or unlike the others
// are refused with a reason the user can act on.
func Enroll(name string, recordings [][]int16) (*Model, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("wake word name %q: use lower-case letters, digits, _ and -", name)
	}
	if len(recordings) < MinTakes {
		return nil, fmt.Errorf("enrolment needs at least %d takes of the phrase, got %d", MinTakes, len(recordings))
	}
	m := &Model{Name: name}
	for i, r := range recordings {
		t, err := Trim(r)
		if err != nil {
			return nil, fmt.Errorf("take %d: %w", i+1, err)
		}
		m.Takes = append(m.Takes, t)
	}
	if err := m.checkConsistent(); err != nil {
		return nil, err
	}
	return m, nil
}

// checkConsistent refuses a set of takes where one is far from the others
// (a cough, a different phrase, someone talking over it): one bad take
// would make every detection against it fail, and widen the score range.
func (m *Model) checkConsistent() error {
	n := len(m.Takes)
	f := make([][][]float32, n)
	for i, t := range m.Takes {
		f[i] = features(t)
	}
	d := make([][]float64, n)
	for i := range d {
		d[i] = make([]float64, n)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			d[i][j] = DTW(f[i], f[j])
			d[j][i] = d[i][j]
			if math.IsInf(d[i][j], 1) {
				return fmt.Errorf("takes %d and %d differ too much in length (%.2f s vs %.2f s); say the phrase at the same pace each time",
					i+1, j+1, seconds(m.Takes[i]), seconds(m.Takes[j]))
			}
		}
	}
	// Each take's mean distance to the others, against the median of those.
	mean := make([]float64, n)
	for i := range mean {
		for j := range n {
			mean[i] += d[i][j] / float64(n-1)
		}
	}
	sorted := append([]float64(nil), mean...)
	sort.Float64s(sorted)
	med := sorted[n/2]
	for i, v := range mean {
		if v > 1.5*med {
			return fmt.Errorf("take %d is unlike the others (distance %.1f, others about %.1f); record it again", i+1, v, med)
		}
	}
	return nil
}

// Spread is the mean pairwise DTW distance between the takes.
func (m *Model) Spread() float64 {
	var sum float64
	var k int
	for i := range m.Takes {
		for j := i + 1; j < len(m.Takes); j++ {
			sum += DTW(features(m.Takes[i]), features(m.Takes[j]))
			k++
		}
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

func seconds(s []int16) float64 { return float64(len(s)) / audio.Rate }

// Save writes the model under dir/<name>/, replacing an earlier enrolment;
// the manifest says it was made at created.
func (m *Model) Save(dir string, created time.Time) error {
	d := filepath.Join(dir, m.Name)
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	mf := manifest{Name: m.Name, Created: created.UTC().Truncate(time.Second), Spread: m.Spread()}
	for i, t := range m.Takes {
		f := fmt.Sprintf("take_%d.wav", i+1)
		if err := audio.WriteWAVFile(filepath.Join(d, f), t); err != nil {
			return err
		}
		mf.Takes = append(mf.Takes, f)
	}
	// Remove takes of an earlier, longer enrolment.
	old, _ := filepath.Glob(filepath.Join(d, "take_*.wav"))
	keep := map[string]bool{}
	for _, f := range mf.Takes {
		keep[f] = true
	}
	for _, o := range old {
		if !keep[filepath.Base(o)] {
			os.Remove(o)
		}
	}
	b, err := json.MarshalIndent(mf, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(d, manifestFile+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(d, manifestFile))
}

// Load reads the model dir/<name>.
func Load(dir, name string) (*Model, error) {
	d := filepath.Join(dir, name)
	b, err := os.ReadFile(filepath.Join(d, manifestFile))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("wake word %q is not enrolled in %s (run: edgeagent wakeword enroll --name %s --templates %s FILE.wav…)", name, dir, name, dir)
		}
		return nil, err
	}
	var mf manifest
	if err := json.Unmarshal(b, &mf); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(d, manifestFile), err)
	}
	if len(mf.Takes) < MinTakes {
		return nil, fmt.Errorf("%s: %d takes, need at least %d", d, len(mf.Takes), MinTakes)
	}
	m := &Model{Name: name}
	for _, f := range mf.Takes {
		s, err := audio.ReadWAVFile(filepath.Join(d, filepath.Base(f)))
		if err != nil {
			return nil, err
		}
		if len(s) < minPhrase {
			return nil, fmt.Errorf("%s: take %s is only %.2f s", d, f, seconds(s))
		}
		m.Takes = append(m.Takes, s)
	}
	return m, nil
}

// ErrNotEnrolled is wrapped by LoadAll when dir holds no enrolment.
var ErrNotEnrolled = errors.New("no wake word enrolled")

// LoadAll loads every wake word enrolled under dir.
func LoadAll(dir string) ([]*Model, error) {
	ms, err := filepath.Glob(filepath.Join(dir, "*", manifestFile))
	if err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, fmt.Errorf("%w in %s (run: edgeagent wakeword enroll --name NAME --templates %s FILE.wav…)", ErrNotEnrolled, dir, dir)
	}
	sort.Strings(ms)
	var out []*Model
	for _, p := range ms {
		m, err := Load(dir, filepath.Base(filepath.Dir(p)))
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

const (
	minPhrase = audio.Rate * 3 / 10 // 0.3 s: shorter is a click, not a phrase
	maxPhrase = audio.Rate * 5 / 2  // 2.5 s: longer is a sentence
)

// Trim cuts a recording down to its speech: the span from the first to the
// last 10 ms frame that is above the recording's own background (its
// quietest tenth), plus 50 ms either side.
func Trim(s []int16) ([]int16, error) {
	n := len(s) / HopSamples
	if n < 10 {
		return nil, fmt.Errorf("recording of %.2f s is too short", seconds(s))
	}
	db := make([]float64, n)
	for i := range db {
		db[i] = audio.DBFS(audio.RMS(s[i*HopSamples : (i+1)*HopSamples]))
	}
	sorted := append([]float64(nil), db...)
	sort.Float64s(sorted)
	floor := sorted[n/10]
	peak := sorted[n-1]
	if peak < -55 {
		return nil, fmt.Errorf("recording is almost silent (peak frame %.0f dBFS); is the microphone muted?", peak)
	}
	if peak-floor < 15 {
		return nil, fmt.Errorf("speech is only %.0f dB above the background; record closer to the microphone or somewhere quieter", peak-floor)
	}
	// Anything 8 dB over the background belongs to the phrase: soft
	// onsets ("h" in "hey") are barely louder than a quiet room.
	th := floor + 8
	first, last := -1, -1
	for i, v := range db {
		if v > th {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	from := max(0, first-5) * HopSamples
	to := min(n, last+6) * HopSamples
	out := append([]int16(nil), s[from:to]...)
	if len(out) < minPhrase {
		return nil, fmt.Errorf("speech lasts only %.2f s; say the whole phrase", seconds(out))
	}
	if len(out) > maxPhrase {
		return nil, fmt.Errorf("speech lasts %.2f s; a wake phrase should be under %.1f s (is there other talk in the recording?)", seconds(out), float64(maxPhrase)/audio.Rate)
	}
	return out, nil
}
