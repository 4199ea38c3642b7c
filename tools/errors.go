package tools

import "errors"

// Error codes, stable strings that MQTT replies and decision traces carry.
const (
	CodeNotFound      = "not_found"
	CodeAmbiguous     = "ambiguous"
	CodeDisabled      = "disabled"
	CodeForbidden     = "forbidden"
	CodeInvalidParams = "invalid_params"
	CodeRefused       = "refused"   // a before_act hook (safety, permission plugin) said no
	CodeFailed        = "failed"    // the tool itself returned an error
	CodeCancelled     = "cancelled" // the caller's context ended (preemption, deadline)
)

// ErrRefused is matched (errors.Is) by a tool's error that says it did not
// act by choice — the e-stop latch, the safety envelope, a rate limit —
// rather than failed: Invoke gives such an error CodeRefused.
var ErrRefused = errors.New("refused")

// Error is what Registry.Invoke returns for every refusal or failure.
type Error struct {
	Code  string
	Tool  string
	Msg   string
	Paths []string // JSON paths that failed validation (CodeInvalidParams)
	Err   error    // the underlying error, if any
}

func (e *Error) Error() string {
	if e.Tool != "" {
		return e.Tool + ": " + e.Msg
	}
	return e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of err, or CodeFailed for foreign errors.
func CodeOf(err error) string {
	var te *Error
	if errors.As(err, &te) {
		return te.Code
	}
	return CodeFailed
}
