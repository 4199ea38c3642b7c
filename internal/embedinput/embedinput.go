// Package embedinput reads the texts of an Ollama /api/embed request,
// whose "input" is one string or a list of them. The two servers that
// answer that endpoint in place of Ollama, the tests' fake
// (llm/local/ollamatest) and replay's (record/replay), read it the same way.
package embedinput

import "errors"

// ErrType is the error for an input that is neither a string nor a list
// of strings.
var ErrType = errors.New("invalid input type")

// Texts returns the texts of input as JSON decoded it into an any.
func Texts(input any) ([]string, error) {
	switch in := input.(type) {
	case string:
		return []string{in}, nil
	case []any:
		texts := make([]string, 0, len(in))
		for _, v := range in {
			s, ok := v.(string)
			if !ok {
				return nil, ErrType
			}
			texts = append(texts, s)
		}
		return texts, nil
	}
	return nil, ErrType
}
