package dashboard

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// The tuning panel saves into the board file the agent runs, as an owner
// would edit it: the file's own text with the camera's motion keys set and
// everything else — comments, order, the keys the running config fills in
// with defaults — left as written. config.reload {save: true} validates the
// result and writes it; the dashboard never writes a file itself.

// tunedFile is the board file's text with the camera's motion keys set.
func tunedFile(path, cam string, t tuning) (string, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return "", errors.New("the board file cannot be read")
	}
	var doc struct {
		Sensors []struct {
			Name string `yaml:"name"`
		} `yaml:"sensors"`
	}
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return "", errors.New("the board file does not parse: run edgeagent check on it")
	}
	idx := -1
	for i, s := range doc.Sensors {
		if s.Name == cam {
			idx = i
		}
	}
	if idx < 0 {
		return "", fmt.Errorf("camera %s is not in the board file", cam)
	}
	f, err := parser.ParseBytes(text, parser.ParseComments)
	if err != nil {
		return "", errors.New("the board file does not parse: run edgeagent check on it")
	}
	base := fmt.Sprintf("$.sensors[%d]", idx)
	for key, v := range t.edits() {
		if err := setKey(f, base, []string{"options", "motion", key}, v); err != nil {
			return "", err
		}
	}
	return f.String(), nil
}

// setKey sets base.keys… to v: replaced where the key is, else merged into
// the deepest mapping that exists, with the missing levels around it.
func setKey(file *ast.File, base string, keys []string, v any) error {
	for depth := len(keys); depth >= 0; depth-- {
		at := base
		if depth > 0 {
			at += "." + strings.Join(keys[:depth], ".")
		}
		p, err := yaml.PathString(at)
		if err != nil {
			return fmt.Errorf("internal: path %s: %w", at, err)
		}
		if _, err := p.FilterFile(file); err != nil {
			continue // not there: one level up
		}
		var val any = v
		for i := len(keys) - 1; i >= depth; i-- {
			val = map[string]any{keys[i]: val}
		}
		out, err := yaml.Marshal(val)
		if err != nil {
			return errors.New("internal: the value cannot be printed")
		}
		if depth == len(keys) {
			return p.ReplaceWithReader(file, strings.NewReader(string(out)))
		}
		return p.MergeFromReader(file, strings.NewReader(string(out)))
	}
	return fmt.Errorf("%s is not in the board file", base)
}
