package main

import (
	"encoding/json"
	"io"
)

// writeJSON writes v as indented JSON, the --json output of the commands.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
