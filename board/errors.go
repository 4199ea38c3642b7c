package board

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
)

// Error is one problem in a board file. Load, Parse and Options.Decode
// return every problem they find, each as an *Error, joined with errors.Join
// and sorted by position, so errors.As finds the first and a caller that
// wants them all can unwrap the join.
type Error struct {
	File string // as given to Parse or Load
	Line int    // 1-based
	Col  int    // 1-based
	Path string // key path, e.g. "sensors[2].address"; empty for YAML syntax errors
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s: %s", e.File, e.Line, e.Col, e.Path, e.Msg)
}

// pos is a line:col in the file.
type pos struct{ line, col int }

// errList collects errors and joins them sorted by position.
type errList []*Error

func (l errList) join() error {
	if len(l) == 0 {
		return nil
	}
	s := slices.Clone(l)
	slices.SortStableFunc(s, func(a, b *Error) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col), strings.Compare(a.Path, b.Path))
	})
	// The same mistake can be seen twice (e.g. a duplicate key found by the
	// duplicate pass and again while decoding); say it once.
	s = slices.CompactFunc(s, func(a, b *Error) bool { return *a == *b })
	errs := make([]error, len(s))
	for i, e := range s {
		errs[i] = e
	}
	return errors.Join(errs...)
}

func syntaxError(file string, err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		p := ye.GetToken().Position
		return &Error{File: file, Line: p.Line, Col: p.Column, Msg: "YAML syntax: " + ye.GetMessage()}
	}
	return &Error{File: file, Line: 1, Col: 1, Msg: "YAML syntax: " + err.Error()}
}
