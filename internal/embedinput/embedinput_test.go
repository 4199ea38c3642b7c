package embedinput

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"
)

func TestTexts(t *testing.T) {
	for _, tc := range []struct {
		input string
		want  []string
		err   error
	}{
		{`"one"`, []string{"one"}, nil},
		{`["a","b"]`, []string{"a", "b"}, nil},
		{`[]`, []string{}, nil},
		{`["a",1]`, nil, ErrType},
		{`7`, nil, ErrType},
		{`null`, nil, ErrType},
	} {
		var in any
		if err := json.Unmarshal([]byte(tc.input), &in); err != nil {
			t.Fatal(err)
		}
		got, err := Texts(in)
		if !errors.Is(err, tc.err) || !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %q, %v; want %q, %v", tc.input, got, err, tc.want, tc.err)
		}
	}
}
