package board

// Which YAML key fills which struct field (goccy's tag rules), and the
// "did you mean" hint for a key that fills none.

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	didyoumean "github.com/edgeagent/edgeagent/internal/suggest"
)

// fieldSet is the decoded-key view of a struct type.
type fieldSet struct {
	byName map[string][]int
	names  []string // in declaration order, for "did you mean"
}

// structFields follows goccy's tag rules: `yaml:"name"`, `yaml:"-"`,
// `yaml:",inline"` on embedded structs, and the lower-cased field name when
// there is no tag.
func structFields(t reflect.Type) fieldSet {
	fs := fieldSet{byName: map[string][]int{}}
	var walk func(t reflect.Type, index []int)
	walk = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("yaml")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			idx := append(slices.Clone(index), i)
			if strings.Contains(","+opts+",", ",inline,") {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					walk(ft, idx)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(f.Name)
			}
			if _, dup := fs.byName[name]; !dup {
				fs.names = append(fs.names, name)
			}
			fs.byName[name] = idx
		}
	}
	walk(t, nil)
	return fs
}

// suggest says which known key was probably meant.
func suggest(key string, known []string) string {
	if best, ok := didyoumean.Closest(key, known); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	if len(known) > 0 && len(known) <= 12 {
		return " (known keys: " + strings.Join(known, ", ") + ")"
	}
	return ""
}
