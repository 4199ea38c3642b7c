package dashboard

import (
	"encoding/json"
	"net/http"
	"strings"
)

// webCaller is the dashboard's name in the tools registry: the journal and
// the audit log show it, as they show mqtt or llm.
const webCaller = "web"

// toolView is a skill as the tools page shows it: its schema makes the
// form; Envelope, when the tool drives a number, bounds its slider.
type toolView struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Permission  string          `json:"permission"`
	Params      json.RawMessage `json:"parameters"`
	Permitted   bool            `json:"permitted"` // this session may call it
	Enabled     bool            `json:"enabled"`
	Envelope    *envelope       `json:"envelope,omitempty"`
}

type envelope struct {
	Param string  `json:"param"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
	Step  float64 `json:"step,omitempty"`
	Unit  string  `json:"unit,omitempty"`
}

// handleTools lists the skills (internal tools stay the agent's own, as
// over MQTT).
func (s *server) handleTools(w http.ResponseWriter, _ *http.Request, sess session) {
	var out []toolView
	for _, spec := range s.tools.List() {
		if spec.Internal {
			continue
		}
		v := toolView{Name: spec.Name, Description: spec.Description, Permission: spec.Permission, Params: spec.Params,
			Permitted: s.tools.Permitted(webCaller, sess.grants(), spec.Permission), Enabled: s.tools.Enabled(spec.Name)}
		if e := spec.Entity; e != nil && e.Platform == "number" && e.Max > e.Min {
			v.Envelope = &envelope{Param: e.Param, Min: e.Min, Max: e.Max, Step: e.Step, Unit: e.Unit}
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, out)
}

type invokeReq struct {
	Tool   string          `json:"tool"`
	Params json.RawMessage `json:"params"`
}

// handleInvoke calls one skill.
func (s *server) handleInvoke(w http.ResponseWriter, r *http.Request, sess session) {
	var req invokeReq
	if err := readJSON(r, &req); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if strings.TrimSpace(req.Tool) == "" {
		httpError(w, http.StatusBadRequest, "tool: required")
		return
	}
	s.invoke(w, r, sess, req.Tool, req.Params)
}
