package board

import (
	"flag"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

var update = flag.Bool("update", false, "rewrite the generated sections of docs/config.md")

const docsPath = "../docs/config.md"

// schemaKeys lists every key path of the board schema, derived from the
// struct tags, in the notation of docs/config.md ("sensors[].pins").
func schemaKeys() []string {
	var keys []string
	var walk func(t reflect.Type, prefix string)
	walk = func(t reflect.Type, prefix string) {
		fs := structFields(t)
		for _, name := range fs.names {
			f := t.FieldByIndex(fs.byName[name])
			path := name
			if prefix != "" {
				path = prefix + "." + name
			}
			keys = append(keys, path)
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct && ft != optionsType:
				walk(ft, path)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				walk(ft.Elem(), path+"[]")
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	return keys
}

var docKeyRe = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")

func TestDocsListEveryKey(t *testing.T) {
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range docKeyRe.FindAllStringSubmatch(string(doc), -1) {
		if documented[m[1]] {
			t.Errorf("docs/config.md lists %s twice", m[1])
		}
		documented[m[1]] = true
	}
	keys := schemaKeys()
	for _, k := range keys {
		if !documented[k] {
			t.Errorf("docs/config.md has no row for %s", k)
		}
	}
	for k := range documented {
		if !slices.Contains(keys, k) {
			t.Errorf("docs/config.md documents %s, which is not in the schema", k)
		}
	}
}

func TestDocsGeneratedSections(t *testing.T) {
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", "/home/pi")
	t.Setenv("XDG_STATE_HOME", "")
	c, err := Parse("robot.yaml", []byte("device: {id: robot, platform: sim}\n"))
	if err != nil {
		t.Fatal(err)
	}
	defaults, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{
		"defaults": "```yaml\n" + string(defaults) + "```\n",
		"pins":     pinTable(),
	}
	text := string(doc)
	for name, want := range sections {
		begin := "<!-- BEGIN generated: " + name + " -->\n"
		end := "<!-- END generated: " + name + " -->"
		i, j := strings.Index(text, begin), strings.Index(text, end)
		if i < 0 || j < i {
			t.Fatalf("docs/config.md lacks the %q markers", name)
		}
		got := text[i+len(begin) : j]
		if got != want {
			if *update {
				text = text[:i+len(begin)] + want + text[j:]
				continue
			}
			t.Errorf("docs/config.md section %q is stale; run: go test ./board -run TestDocs -update\n--- have\n%s--- want\n%s", name, got, want)
		}
	}
	if *update && text != string(doc) {
		if err := os.WriteFile(docsPath, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func pinTable() string {
	var models []string
	for m := range headers {
		models = append(models, m)
	}
	slices.Sort(models)
	var b strings.Builder
	b.WriteString("| model | platform | GPIO header pins | I2C buses (SDA/SCL pins) | default bus |\n|---|---|---|---|---|\n")
	for _, m := range models {
		h := headers[m]
		var buses []string
		for _, bus := range h.busNames() {
			p := h.i2c[bus]
			buses = append(buses, fmt.Sprintf("`%s` (%s/%s)", bus, p[0], p[1]))
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | `%s` |\n", m, h.platform, strings.Join(h.gpio, ", "), strings.Join(buses, ", "), h.defaultBus)
	}
	return b.String()
}

var docRowRe = regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([^`]*)`")

// TestDocsDefaultColumn checks the default column of the key tables against
// the defaults the code fills in, wherever the column gives a literal.
func TestDocsDefaultColumn(t *testing.T) {
	doc, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", "/home/pi")
	c, err := Parse("robot.yaml", []byte("device: {id: robot, platform: sim}\n"))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := c.Marshal()
	var tree map[string]any
	if err := yaml.Unmarshal(out, &tree); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, m := range docRowRe.FindAllStringSubmatch(string(doc), -1) {
		key, want := m[1], strings.ReplaceAll(m[2], "<id>", "robot")
		if strings.Contains(key, "[]") || strings.Contains(want, "$") {
			continue
		}
		var v any = tree
		for _, part := range strings.Split(key, ".") {
			mm, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = mm[part]
		}
		if got := formatDefault(v); got != want {
			t.Errorf("docs/config.md says %s defaults to %s; the code fills %s", key, want, got)
		}
		checked++
	}
	if checked < 40 {
		t.Errorf("only %d defaults checked; has the table format changed?", checked)
	}
}

func formatDefault(v any) string {
	switch x := v.(type) {
	case nil:
		return "<absent>"
	case string:
		if x == "" || x == "*" {
			return fmt.Sprintf("%q", x)
		}
		return x
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatDefault(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(v)
}
