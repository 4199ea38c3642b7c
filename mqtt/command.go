package mqtt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/edgeagent/edgeagent/internal/strictjson"
	"github.com/edgeagent/edgeagent/tools"
)

// Limits on what a command may be. A robot's control plane is reachable by
// whatever else is on the broker, so every field is bounded.
const (
	MaxPayload = 64 << 10 // bytes of one cmd/admin message
	maxID      = 128
	maxTool    = 128
	maxText    = 4096
	maxTopic   = 256
)

// The error codes of every reply (mqtt/README.md has the table; a test
// walks it). Six, so that a controller can branch on them: what it sent is
// wrong (invalid), not there (not_found), not allowed to it (forbidden),
// refused by the robot (refused: e-stop latch, envelope, rate limit, a
// disabled tool, a broken config), not now (busy) or went wrong while
// running (failed). The message says the rest in words.
const (
	CodeInvalid   = "invalid"
	CodeNotFound  = tools.CodeNotFound
	CodeForbidden = tools.CodeForbidden
	CodeRefused   = tools.CodeRefused
	CodeBusy      = "busy"
	CodeFailed    = tools.CodeFailed
)

// Codes are the reply codes, for the README's table and its test.
var Codes = []string{CodeInvalid, CodeNotFound, CodeForbidden, CodeRefused, CodeBusy, CodeFailed}

// replyCode maps the tool registry's finer codes onto the six.
func replyCode(toolCode string) string {
	switch toolCode {
	case tools.CodeInvalidParams, tools.CodeAmbiguous:
		return CodeInvalid
	case tools.CodeDisabled:
		return CodeRefused
	case tools.CodeNotFound, tools.CodeForbidden, tools.CodeRefused:
		return toolCode
	}
	return CodeFailed // failed, cancelled, and anything new
}

// Command is one request on the cmd (or admin) topic. Exactly one of Tool,
// Text and Op is set.
type Command struct {
	ID string `json:"id"`
	// Tool names a skill to invoke directly (the fast path, no LLM).
	Tool string `json:"tool,omitempty"`
	// Params are the tool's (or the op's) parameters: a JSON object.
	Params json.RawMessage `json:"params,omitempty"`
	// Text goes to the decision engine.
	Text string `json:"text,omitempty"`
	// Speak asks for the outcome of a text command out loud too (where the
	// robot has a voice); text commands are silent otherwise.
	Speak bool `json:"speak,omitempty"`
	// Op is an administration request (skills, enable, disable, plugins,
	// load, unload, stats, audit, reload, discovery, status); it needs the
	// admin permission.
	Op string `json:"op,omitempty"`
	// ReplyTo overrides the reply topic for this request.
	ReplyTo string `json:"reply_to,omitempty"`
}

// Reply answers a Command. ID is null when the request had none we could
// read. Error replies carry a stable Code (and Paths for invalid params).
type Reply struct {
	ID     *string  `json:"id"`
	OK     bool     `json:"ok"`
	Result any      `json:"result,omitempty"`
	Error  string   `json:"error,omitempty"`
	Code   string   `json:"code,omitempty"`
	Paths  []string `json:"paths,omitempty"`
	// Robot is the device that answers, so a caller of a fleet or group
	// command can count the answers.
	Robot string `json:"robot,omitempty"`
}

// RequestError is a request that could not be carried out, with what we
// could still learn of it so that the error reply reaches the requester.
type RequestError struct {
	ID      string // "" when the request had no readable id
	ReplyTo string // "" unless a valid reply_to could be read
	Code    string
	Msg     string
	Paths   []string
}

func (e *RequestError) Error() string { return e.Msg }

func badRequest(id, replyTo, format string, args ...any) *RequestError {
	return &RequestError{ID: id, ReplyTo: replyTo, Code: CodeInvalid, Msg: fmt.Sprintf(format, args...)}
}

// DecodeCommand parses and checks one command. It never panics and never
// allocates more than the payload size bounds. On error it returns a
// *RequestError that still carries the id and reply_to when they could be
// read, even from a payload that is too large or malformed afterwards.
func DecodeCommand(payload []byte) (Command, error) {
	if len(payload) > MaxPayload {
		return Command{}, tooLarge(payload[:MaxPayload], len(payload))
	}
	var raw struct {
		ID      json.RawMessage `json:"id"`
		Tool    json.RawMessage `json:"tool"`
		Params  json.RawMessage `json:"params"`
		Text    json.RawMessage `json:"text"`
		Op      json.RawMessage `json:"op"`
		ReplyTo json.RawMessage `json:"reply_to"`
		Speak   json.RawMessage `json:"speak"`
	}
	// One strict pass: duplicate keys (at any depth, params included),
	// unknown fields and trailing data are errors.
	if err := strictjson.Decode(payload, &raw); err != nil {
		id, rt := peekIDs(payload)
		return Command{}, badRequest(id, rt, "not a command: %s (want a JSON object such as {\"id\":\"1\",\"tool\":\"headlight.set\",\"params\":{\"on\":true}})", describeJSONError(err))
	}
	if bytes.TrimSpace(payload)[0] != '{' {
		return Command{}, badRequest("", "", "not a command: want a JSON object")
	}
	var c Command
	var err error
	// reply_to first, so that every later error can be sent there.
	if c.ReplyTo, err = stringField("reply_to", raw.ReplyTo, maxTopic); err == nil && c.ReplyTo != "" {
		err = checkTopicName(c.ReplyTo)
		if err != nil {
			err = fmt.Errorf("reply_to: %w", err)
		}
	}
	if err != nil {
		id, _ := stringField("id", raw.ID, maxID)
		return Command{}, badRequest(id, "", "%v", err)
	}
	if c.ID, err = stringField("id", raw.ID, maxID); err != nil {
		return Command{}, badRequest("", c.ReplyTo, "%v", err)
	}
	if c.ID == "" {
		return Command{}, badRequest("", c.ReplyTo, "missing id: every command needs a non-empty string id, echoed in its reply")
	}
	fail := func(format string, args ...any) (Command, error) {
		return Command{}, badRequest(c.ID, c.ReplyTo, format, args...)
	}
	if c.Tool, err = stringField("tool", raw.Tool, maxTool); err != nil {
		return fail("%v", err)
	}
	if c.Text, err = stringField("text", raw.Text, maxText); err != nil {
		return fail("%v", err)
	}
	if c.Op, err = stringField("op", raw.Op, maxTool); err != nil {
		return fail("%v", err)
	}
	set := 0
	for _, s := range []string{c.Tool, c.Text, c.Op} {
		if s != "" {
			set++
		}
	}
	switch {
	case set == 0:
		return fail("nothing to do: set one of tool (a skill call), text (for the decision engine) or op (administration)")
	case set > 1:
		return fail("set only one of tool, text and op")
	case c.Text != "" && strings.TrimSpace(c.Text) == "":
		return fail("text is blank")
	}
	switch sp := string(bytes.TrimSpace(raw.Speak)); {
	case sp == "" || sp == "null" || sp == "false":
	case sp != "true":
		return fail("speak must be true or false, got %s", jsonKind(raw.Speak))
	case c.Text == "":
		return fail("speak goes with text: a tool or op call has no spoken reply")
	default:
		c.Speak = true
	}
	switch p := bytes.TrimSpace(raw.Params); {
	case len(p) == 0 || string(p) == "null":
	case p[0] != '{':
		return fail("params must be a JSON object, got %s", jsonKind(p))
	case c.Text != "":
		return fail("params go with tool or op, not with text")
	default:
		c.Params = json.RawMessage(p)
	}
	return c, nil
}

// stringField decodes an optional string field with a length bound.
func stringField(name string, raw json.RawMessage, max int) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] != '"' {
		return "", fmt.Errorf("%s must be a string, got %s", name, jsonKind(raw))
	}
	var s string
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		s = string(body) // no escapes: the decoder already checked it is a string
	} else if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("%s: %v", name, err)
	}
	if len(s) > max {
		return "", fmt.Errorf("%s is %d bytes; the limit is %d", name, len(s), max)
	}
	if !utf8.ValidString(s) || strings.ContainsRune(s, 0) {
		return "", fmt.Errorf("%s is not valid UTF-8 text", name)
	}
	return s, nil
}

func jsonKind(raw []byte) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func describeJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	case errors.As(err, &te):
		return fmt.Sprintf("want a JSON object, got %s", te.Value)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "malformed JSON: empty or truncated"
	}
	return err.Error() // e.g. json: unknown field "x"
}

// tooLarge refuses a command of size bytes, with the id and reply_to read
// from its head when they are there.
func tooLarge(head []byte, size int) *RequestError {
	id, rt := peekIDs(head)
	return &RequestError{ID: id, ReplyTo: rt, Code: CodeInvalid,
		Msg: fmt.Sprintf("command is %d bytes; the limit is %d", size, MaxPayload)}
}

// peekIDs reads the top-level "id" and "reply_to" of a payload that may be
// malformed further on or too large to decode: it walks tokens and stops at
// the first problem, so a reply can still carry the request's id.
func peekIDs(payload []byte) (id, replyTo string) {
	dec := json.NewDecoder(bytes.NewReader(payload))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", ""
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return
		}
		key, _ := kt.(string)
		switch key {
		case "id", "reply_to":
			vt, err := dec.Token()
			if err != nil {
				return
			}
			s, ok := vt.(string)
			if !ok {
				if d, isDelim := vt.(json.Delim); isDelim && (d == '{' || d == '[') {
					return // a container: give up rather than walk it
				}
				continue
			}
			if key == "id" && len(s) <= maxID && utf8.ValidString(s) && !strings.ContainsRune(s, 0) { // as stringField
				id = s
			}
			if key == "reply_to" && len(s) <= maxTopic && checkTopicName(s) == nil {
				replyTo = s
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return
			}
		}
	}
	return
}

// checkTopicName checks a topic to publish to: no wildcards, no NUL, not a
// broker-internal $ topic, not empty.
func checkTopicName(t string) error {
	switch {
	case t == "":
		return errors.New("empty topic")
	case len(t) > maxTopic:
		return fmt.Errorf("topic is %d bytes; the limit is %d", len(t), maxTopic)
	case strings.ContainsAny(t, "+#\x00"):
		return fmt.Errorf("%q: wildcards are not allowed in a topic name", t)
	case strings.HasPrefix(t, "$"):
		return fmt.Errorf("%q: $ topics belong to the broker", t)
	case !utf8.ValidString(t):
		return errors.New("topic is not valid UTF-8")
	}
	return nil
}

// replyFor builds the reply to a finished call.
func replyFor(id string, res any, err error) Reply {
	r := Reply{OK: err == nil, Result: res}
	if id != "" {
		r.ID = &id
	}
	if err == nil {
		return r
	}
	r.Result = nil
	r.Error = err.Error()
	var re *RequestError
	var te *tools.Error
	switch {
	case errors.As(err, &re):
		r.Code, r.Paths = re.Code, re.Paths
	case errors.As(err, &te):
		r.Code, r.Paths = replyCode(te.Code), te.Paths
	default:
		r.Code = CodeFailed
	}
	return r
}
