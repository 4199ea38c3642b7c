package record

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/goccy/go-yaml"
)

// A recording carries the board it ran and the files that board names (a
// mic's utterances, a wake-word head, the LLM's skill texts), so that it
// replays in any checkout and on any machine: the files are attachments
// "files/<n>/<name>", and the attached board names them by those paths,
// relative to its own folder. A replay unpacks them beside the board. The
// alternative, paths relative to the board file's folder, only works
// while the recording travels with that folder, and a robot's recording
// rarely does.
//
// Which strings name files is not known here (a kind's options are its
// own), so every string of the board that names an existing regular file
// is taken, relative paths from the board file's folder as the kinds read
// them (sensors.Config.File). A string without "/" or "." ("builtin") is
// never a file here. Secrets (keys, certificates, password files) are never
// taken. Each file taken is named "files/<n>/<name>" in the attached board
// whether or not its bytes fit in the recording (see attach.go): one that
// does not is carried by its SHA-256, and a replay looks for it there.

// FilesPrefix starts the names of the attachments that hold the board's
// files.
const FilesPrefix = "files/"

// Attachment is one of the files a board names, as a recording carries it.
type Attachment struct {
	Name string // files/<n>/<base name>: how the attached board names it
	Path string // where it is read
	// Key is the board setting that names it ("sensors[1].options.model"):
	// what messages about it say, never its content.
	Key string
}

// secretKey names settings whose files must not leave the robot.
var secretKey = regexp.MustCompile(`(?i)(password|secret|token|key|cert|(^|_)ca$|tls)`)

// BoardFiles rewrites a board's YAML (as board.Config.Marshal prints it)
// so that the files it names are attachments, and lists them; dir is the
// board file's folder. A board without files comes back as it was.
func BoardFiles(y []byte, dir string) ([]byte, []Attachment, error) {
	f := &fileFinder{seen: map[string]string{}}
	out, err := RewritePaths(y, dir, f.attach)
	if err != nil {
		return nil, nil, err
	}
	return out, f.files, nil
}

// RewritePaths gives every string of a board's YAML that may name a file
// (not a secret's, and with "/" or "." in it) to fn, with its key
// ("sensors[1].options.model") and the path it names from dir, and writes
// what fn returns in its place; fn returning false leaves it. A board fn
// changes nothing in comes back as it was.
func RewritePaths(y []byte, dir string, fn func(key, path string) (string, bool)) ([]byte, error) {
	var doc yaml.MapSlice
	if err := yaml.UnmarshalWithOptions(y, &doc, yaml.UseOrderedMap()); err != nil {
		return nil, fmt.Errorf("the board's own printout does not parse: %w", err)
	}
	w := &pathWalker{dir: dir, fn: fn}
	out := w.walk("", doc)
	if !w.changed {
		return y, nil
	}
	return yaml.MarshalWithOptions(out, yaml.Indent(2), yaml.IndentSequence(true), yaml.UseLiteralStyleIfMultiline(true))
}

type pathWalker struct {
	dir     string
	fn      func(key, path string) (string, bool)
	changed bool
}

// walk rewrites v, found at key.
func (w *pathWalker) walk(key string, v any) any {
	switch x := v.(type) {
	case yaml.MapSlice:
		out := make(yaml.MapSlice, len(x))
		for i, it := range x {
			out[i] = yaml.MapItem{Key: it.Key, Value: it.Value}
			if k := fmt.Sprint(it.Key); !secretKey.MatchString(k) {
				if key != "" {
					k = key + "." + k
				}
				out[i].Value = w.walk(k, it.Value)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = w.walk(fmt.Sprintf("%s[%d]", key, i), e)
		}
		return out
	case string:
		if p, ok := w.path(x); ok {
			if s, ok := w.fn(key, p); ok {
				w.changed = true
				return s
			}
		}
	}
	return v
}

// path is the file s names, read from dir, if s may name one.
func (w *pathWalker) path(s string) (string, bool) {
	if !strings.ContainsAny(s, "/.") || strings.ContainsAny(s, "\n") || len(s) > 4096 {
		return "", false
	}
	p := s
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		p = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.dir, p)
	}
	return filepath.Clean(p), true
}

type fileFinder struct {
	seen  map[string]string // path read -> attachment name
	files []Attachment
}

// attach takes the file at p, named by key, if there is one, and returns
// its name in the recording.
func (f *fileFinder) attach(key, p string) (string, bool) {
	if name, ok := f.seen[p]; ok {
		return name, true
	}
	if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
		return "", false
	}
	name := fmt.Sprintf("%s%d/%s", FilesPrefix, len(f.files)+1, filepath.Base(p))
	f.seen[p] = name
	f.files = append(f.files, Attachment{Name: name, Path: p, Key: key})
	return name, true
}
