// Package boardtest helps the tests that hold errors about a board file to
// the rule that they never repeat a value from it (a device id, a path, a
// secret): Walk feeds a check a board with each of its values replaced in
// turn by a marker, and fails on an error that repeats the marker. board's
// own test walks the loader; cmd/edgeagent's walks `check`, which also
// builds the sensors and plugins.
package boardtest

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/token"
)

// Markers are put in place of one value of a board at a time: a string, an
// integer, a float, a duration and a negative number, each unlikely
// anywhere else.
var Markers = []string{"zqx7marker", "987654321", "9876.54321", "987654321s", "-987654321"}

var (
	indexRE  = regexp.MustCompile(`\[\d+\]`)
	markerRE = regexp.MustCompile(`zqx7marker|-?9876\.?54321s?`)
)

// leaks reports whether msg repeats a marker (also as a float printed
// with an exponent: 9.87654321e+08).
func leaks(msg string) bool {
	flat := strings.ReplaceAll(msg, ".", "")
	return strings.Contains(msg, "zqx7marker") || strings.Contains(flat, "98765432")
}

// Walk feeds refuse each mutant of each board file (with markers) and
// fails t on every error line that repeats a marker, once per kind of
// message; it fails t too when fewer than a quarter of the mutants are
// refused (the markers would not reach the checks).
func Walk(t testing.TB, files, markers []string, refuse func(file string, doc []byte) error) {
	t.Helper()
	seen := map[string]bool{}
	tried, failed := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		mutants(string(src), markers, func(line int, doc string) {
			tried++
			err := refuse(f, []byte(doc))
			if err == nil {
				return
			}
			failed++
			for _, e := range strings.Split(err.Error(), "\n") {
				if leaks(e) && !seen[shape(e)] {
					seen[shape(e)] = true
					t.Errorf("%s (line %d): %s", filepath.Base(f), line, e)
				}
			}
		})
	}
	t.Logf("%d mutants, %d refused", tried, failed)
	if failed < tried/4 {
		t.Fatalf("only %d of %d mutants were refused: the markers do not reach the validation", failed, tried)
	}
}

// shape is a leaking message with its indices and markers blanked, so
// that a test reports each kind of message once.
func shape(msg string) string {
	parts := strings.SplitN(msg, ": ", 3)
	last := parts[len(parts)-1]
	head := ""
	if len(parts) > 1 {
		head = indexRE.ReplaceAllString(parts[len(parts)-2], "[]") + ": "
	}
	return head + markerRE.ReplaceAllString(last, "M")
}

// mutants yields src with each scalar value (not a key) replaced by each
// of markers in turn, with the line it is on.
func mutants(src string, markers []string, yield func(line int, doc string)) {
	// The lexer counts columns in runes (the boards have °C and Ω): find
	// each line's start in bytes, and a column's byte within it.
	lines := strings.SplitAfter(src, "\n")
	lineStart := make([]int, len(lines)+1)
	for i, l := range lines {
		lineStart[i+1] = lineStart[i] + len(l)
	}
	byteAt := func(line, col int) int {
		if line < 1 || line > len(lines) {
			return -1
		}
		r := []rune(lines[line-1])
		if col < 1 || col > len(r) {
			return -1
		}
		return lineStart[line-1] + len(string(r[:col-1]))
	}
	toks := lexer.Tokenize(src)
	// A key written in many blocks (every sensor's interval, every
	// threshold's priority) goes through the same check: mutate its value
	// once per key name and kind of scalar, so the tests stay fast under
	// -race.
	done := map[string]bool{}
	for i, tk := range toks {
		switch tk.Type {
		case token.StringType, token.IntegerType, token.FloatType, token.BoolType, token.HexIntegerType,
			token.OctetIntegerType, token.BinaryIntegerType, token.DoubleQuoteType, token.SingleQuoteType,
			token.InfinityType, token.NanType, token.NullType:
		default:
			continue
		}
		if i+1 < len(toks) && toks[i+1].Type == token.MappingValueType {
			continue // a key
		}
		if i >= 2 && toks[i-1].Type == token.MappingValueType {
			k := fmt.Sprint(toks[i-2].Value, "@", tk.Type)
			if done[k] {
				continue
			}
			done[k] = true
		}
		start := byteAt(tk.Position.Line, tk.Position.Column)
		n := len(tk.Value)
		if tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType {
			n += 2
		}
		if start < 0 || start+n > len(src) || (tk.Type != token.DoubleQuoteType && tk.Type != token.SingleQuoteType && src[start:start+n] != tk.Value) {
			continue // a multi-line or escaped scalar: not worth the bookkeeping
		}
		for _, m := range markers {
			yield(tk.Position.Line, src[:start]+m+src[start+n:])
		}
	}
}
