package tools

import (
	"encoding/json"
	"time"

	"github.com/edgeagent/edgeagent/worldmodel"
)

// maxJournalResult bounds the result a tool_call record keeps: a snapshot's
// base64 JPEG would otherwise pin hundreds of KiB per record in the journal.
const maxJournalResult = 4 << 10

// callRecord is the journal's account of one call. Params were validated
// (defaults filled), so they are what the tool actually ran with.
func callRecord(c Call, tool string, params json.RawMessage, res Result, err error, took time.Duration) worldmodel.Record {
	rec := struct {
		Caller   string          `json:"caller"`
		Via      *Via            `json:"via,omitempty"`    // a fleet's or a group's command
		Grants   []string        `json:"grants,omitempty"` // the call's own, beyond the caller's: a replay needs them
		Cycle    uint64          `json:"cycle,omitempty"`
		Group    int             `json:"step_group,omitempty"` // parallel steps of the cycle's plan
		Params   json.RawMessage `json:"params,omitempty"`
		OK       bool            `json:"ok"`
		Code     string          `json:"code,omitempty"`
		Error    string          `json:"error,omitempty"`
		Result   json.RawMessage `json:"result,omitempty"`
		Omitted  int             `json:"result_bytes_omitted,omitempty"`
		Duration float64         `json:"duration_ms"`
	}{Caller: c.Caller, Via: c.Via, Grants: c.Grants, Cycle: c.Cycle, Group: c.StepGroup, Params: params, OK: err == nil, Duration: float64(took.Microseconds()) / 1000}
	if err != nil {
		rec.Code, rec.Error = CodeOf(err), err.Error()
	} else if b, merr := json.Marshal(res); merr == nil {
		if len(b) <= maxJournalResult {
			rec.Result = b
		} else {
			rec.Omitted = len(b)
		}
	}
	if len(rec.Params) > maxJournalResult {
		rec.Params = nil
	}
	data, merr := json.Marshal(rec)
	if merr != nil { // params are valid JSON and the rest are plain values
		data = []byte(`{"error":"unencodable call record"}`)
	}
	return worldmodel.Record{Kind: "tool_call", Source: tool, Data: data}
}
