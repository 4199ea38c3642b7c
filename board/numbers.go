package board

// Numbers as YAML writes them: integers of any size (so the range check
// can say "does not fit" rather than "not a number") and floats written in
// the ways goccy leaves as strings.

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// bigInt is an integer literal as sign and magnitude, so both int64 and
// uint64 ranges can be checked without loss.
type bigInt struct {
	sign int
	mag  uint64
}

func (b bigInt) int64() int64 {
	if b.sign < 0 {
		return -int64(b.mag-1) - 1
	}
	return int64(b.mag)
}

func intValue(n ast.Node) (bigInt, bool) {
	var text string
	switch v := n.(type) {
	case *ast.IntegerNode:
		text = v.GetToken().Value
	case *ast.StringNode:
		// goccy leaves integers too big for int64/uint64 as plain strings;
		// read them so the error says "does not fit" rather than "not an
		// integer".
		if !isPlain(v) {
			return bigInt{}, false
		}
		text = v.Value
	default:
		return bigInt{}, false
	}
	text = strings.ReplaceAll(text, "_", "")
	b := bigInt{sign: 1}
	if strings.HasPrefix(text, "-") {
		b.sign, text = -1, text[1:]
	} else {
		text = strings.TrimPrefix(text, "+")
	}
	if strings.HasPrefix(text, "0o") || strings.HasPrefix(text, "0O") {
		text = "0" + text[2:]
	}
	u, err := strconv.ParseUint(text, 0, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return bigInt{sign: b.sign, mag: math.MaxUint64}, true
		}
		return bigInt{}, false
	}
	b.mag = u
	return b, true
}

func floatValue(n ast.Node) (float64, bool) {
	switch v := n.(type) {
	case *ast.IntegerNode:
		i, ok := intValue(v)
		if !ok {
			return 0, false
		}
		f := float64(i.mag)
		if i.sign < 0 {
			f = -f
		}
		return f, true
	case *ast.FloatNode:
		return v.Value, true
	case *ast.InfinityNode:
		return v.Value, true
	case *ast.NanNode:
		return math.NaN(), true
	case *ast.StringNode:
		// goccy reads "1e3" as a string; accept plain (unquoted) numbers.
		if !isPlain(v) {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(v.Value, "_", ""), 64)
		if err != nil || strings.ContainsAny(v.Value, "xXpP") || strings.EqualFold(v.Value, "nan") || strings.Contains(strings.ToLower(v.Value), "inf") {
			return 0, false
		}
		return f, true
	}
	return 0, false
}
