package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/edgeagent/edgeagent/agent"
	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/worldmodel"
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

type commandReq struct {
	Text string `json:"text"`
}

// maxCommand bounds a sentence for the agent.
const maxCommand = 500

// handleCommand hands a sentence to the agent loop, as a text command over
// MQTT does: the fast paths or the decision engine pick the tools, which
// run with the session's grants; the decision shows up on the live channel.
func (s *server) handleCommand(w http.ResponseWriter, r *http.Request, sess session) {
	var req commandReq
	if err := readJSON(r, &req); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	text := strings.TrimSpace(req.Text)
	if text == "" || len(text) > maxCommand {
		httpError(w, http.StatusBadRequest, fmt.Sprintf("text: 1 to %d characters", maxCommand))
		return
	}
	ctx, cancel := clock.WithTimeout(r.Context(), s.clk, s.board.Agent.CycleTimeout) // validated > 0
	defer cancel()
	s.log.Info("dashboard command", "user", sess.User, "role", sess.Role)
	out, err := s.host.Agent().Submit(ctx, agent.Command{ID: fmt.Sprintf("web-%d", s.commands.Add(1)), Caller: webCaller,
		Grants: sess.grants(), Text: text})
	if err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"ok": false, "error": err.Error(), "outcome": out})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "outcome": out})
}

// handleEStop is the E-STOP button: any session may press it, viewers
// included, as anyone may hit a robot's physical e-stop and anyone who may
// publish to the MQTT e-stop topic may stop it. It raises the Critical
// "estop" event, whose handlers stop every actuator before Raise returns
// (audited as estop:web); only an admin resets it (estop.reset).
func (s *server) handleEStop(w http.ResponseWriter, _ *http.Request, sess session) {
	s.log.Warn("E-STOP pressed on the dashboard", "user", sess.User, "role", sess.Role)
	s.host.Raise(worldmodel.Event{Kind: "estop", Source: webCaller, Priority: worldmodel.Critical,
		Message: "E-STOP pressed on the dashboard by " + sess.User})
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "latched": s.world.Health()[healthEStop] == "latched"})
}
