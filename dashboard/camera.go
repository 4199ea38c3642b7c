package dashboard

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/edgeagent/edgeagent/tools"
)

// cameraKind is the sensor kind whose live frames are shown; spelled out,
// as the dashboard does not import sensor drivers.
const cameraKind = "camera"

// cameras are the board's enabled cameras.
func (s *server) cameras() []string {
	var out []string
	for _, sc := range s.board.Sensors {
		if sc.Kind == cameraKind && sc.Enabled {
			out = append(out, sc.Name)
		}
	}
	return out
}

func (s *server) camera(w http.ResponseWriter, r *http.Request) (string, bool) {
	cam := r.PathValue("name")
	if !slices.Contains(s.cameras(), cam) {
		httpError(w, http.StatusNotFound, "no such camera")
		return "", false
	}
	return cam, true
}

// handleStream is a camera's live frames as MJPEG (multipart/x-mixed-replace),
// which an <img> shows as video. While it runs the camera encodes
// <camera>.live (a Watch); a client that reads slowly gets the newest frame
// when it is ready for one, so nothing queues.
func (s *server) handleStream(w http.ResponseWriter, r *http.Request, _ session) {
	cam, ok := s.camera(w, r)
	if !ok {
		return
	}
	src := cam + ".live"
	stop := s.world.Watch(src)
	defer stop()
	s.streams.Add(1)
	defer s.streams.Add(-1)
	cur := s.world.NewCursor(false) // only to wake at the model's changes
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "multipart/x-mixed-replace; boundary=frame")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	var last uint64
	for {
		wake := cur.Wait()
		if o, ok := s.world.Latest(src); ok && o.Seq != last && o.Blob != nil {
			last = o.Seq
			_ = rc.SetWriteDeadline(time.Now().Add(writeTimeout))
			hdr := "--frame\r\nContent-Type: image/jpeg\r\nContent-Length: " + strconv.Itoa(len(o.Blob.Data)) +
				"\r\nX-Seq: " + strconv.FormatUint(o.Seq, 10) + "\r\n\r\n"
			if _, err := w.Write([]byte(hdr)); err != nil {
				return
			}
			if _, err := w.Write(o.Blob.Data); err != nil {
				return
			}
			if _, err := w.Write([]byte("\r\n")); err != nil || rc.Flush() != nil {
				return
			}
			s.frames.Add(1)
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		case <-wake:
		}
	}
}

// handleSnapshot is the camera's newest frame: a live one if someone
// watches, else its latest snapshot.
func (s *server) handleSnapshot(w http.ResponseWriter, r *http.Request, _ session) {
	cam, ok := s.camera(w, r)
	if !ok {
		return
	}
	for _, src := range []string{cam + ".live", cam + ".snapshot"} {
		if o, ok := s.world.Latest(src); ok && o.Blob != nil {
			w.Header().Set("Content-Type", o.Blob.MIME)
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(o.Blob.Data)
			return
		}
	}
	httpError(w, http.StatusNotFound, cam+" has no frame yet")
}

// tuning is what the camera panel changes.
type tuning struct {
	Threshold *int     `json:"threshold"`
	MinArea   *int     `json:"min_area"`
	Masks     []string `json:"masks"`
}

// edits are the motion keys the tuning sets, by their board names.
func (t tuning) edits() map[string]any {
	m := map[string]any{}
	if t.Threshold != nil {
		m["threshold"] = *t.Threshold
	}
	if t.MinArea != nil {
		m["min_area"] = *t.MinArea
	}
	if t.Masks != nil {
		m["masks"] = t.Masks
	}
	return m
}

// handleTuning saves a camera's motion settings the way an administrator
// reloads the board: the board file with these keys changed goes to
// config.reload {save: true}, which validates it (as `edgeagent check`
// does), writes it (keeping the old file as .bak) and rebuilds the agent
// from it, or refuses it and keeps the running one. An agent not started
// from a file (a test, a replay) gets the running config with the keys
// changed, applied until it stops. The dashboard writes no file itself.
func (s *server) handleTuning(w http.ResponseWriter, r *http.Request, sess session) {
	cam, ok := s.camera(w, r)
	if !ok {
		return
	}
	var t tuning
	if err := readJSON(r, &t); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	if len(t.edits()) == 0 {
		httpError(w, http.StatusBadRequest, "nothing to change: give threshold, min_area or masks")
		return
	}
	var doc string
	var err error
	file := s.host.BoardFile()
	if file != "" {
		doc, err = tunedFile(file, cam, t)
	} else {
		doc, err = s.tunedConfig(cam, t)
	}
	if err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	params, _ := json.Marshal(map[string]any{"yaml": doc, "save": file != ""}) // a string and a bool always encode
	s.invoke(w, r, sess, "config.reload", params)
}

// boardDoc is the running board as generic YAML, to read and change keys
// of blocks the board package keeps opaque (a camera's options).
func (s *server) boardDoc() (map[string]any, error) {
	y, err := s.board.Marshal()
	if err != nil {
		return nil, errors.New("the running config cannot be printed")
	}
	var doc map[string]any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		return nil, errors.New("the running config cannot be read back")
	}
	return doc, nil
}

// sensorDoc is one sensor's block in doc.
func sensorDoc(doc map[string]any, name string) map[string]any {
	list, _ := doc["sensors"].([]any)
	for _, item := range list {
		if sc, _ := item.(map[string]any); sc != nil && sc["name"] == name {
			return sc
		}
	}
	return nil
}

// cameraMotion is what the tuning panel starts from: each camera's frame
// size and the motion keys the board sets (absent keys are the camera's
// defaults, which the page shows as such).
func (s *server) cameraMotion() map[string]map[string]any {
	out := map[string]map[string]any{}
	doc, err := s.boardDoc()
	if err != nil {
		return out
	}
	for _, cam := range s.cameras() {
		v := map[string]any{}
		if sc := sensorDoc(doc, cam); sc != nil {
			opts, _ := sc["options"].(map[string]any)
			m, _ := opts["motion"].(map[string]any)
			for _, k := range []string{"threshold", "min_area", "masks"} {
				if x, ok := m[k]; ok {
					v[k] = x
				}
			}
			v["width"], v["height"] = opts["width"], opts["height"]
		}
		out[cam] = v
	}
	return out
}

// tunedConfig is the running board's YAML with the camera's motion keys
// set.
func (s *server) tunedConfig(cam string, t tuning) (string, error) {
	doc, err := s.boardDoc()
	if err != nil {
		return "", err
	}
	if sc := sensorDoc(doc, cam); sc != nil {
		opts := child(sc, "options")
		m := child(opts, "motion")
		for k, v := range t.edits() {
			m[k] = v
		}
		out, err := yaml.Marshal(doc)
		if err != nil {
			return "", errors.New("the tuned config cannot be printed")
		}
		return string(out), nil
	}
	return "", fmt.Errorf("camera %s is not in the running config", cam)
}

// child returns m[key] as a map, creating it when absent.
func child(m map[string]any, key string) map[string]any {
	if c, ok := m[key].(map[string]any); ok {
		return c
	}
	c := map[string]any{}
	m[key] = c
	return c
}

// invoke runs a tool for the session as caller "web": the registry checks
// the role's grants, the schema, the envelope, and the audit records it.
func (s *server) invoke(w http.ResponseWriter, r *http.Request, sess session, tool string, params json.RawMessage) {
	res, err := s.tools.Invoke(r.Context(), tools.Call{Caller: webCaller, Grants: sess.grants(), Tool: tool, Params: params})
	if err != nil {
		code := tools.CodeOf(err)
		status := http.StatusUnprocessableEntity
		switch code {
		case tools.CodeForbidden:
			status = http.StatusForbidden
		case tools.CodeNotFound:
			status = http.StatusNotFound
		}
		s.log.Info("dashboard call failed", "user", sess.User, "tool", tool, "code", code)
		writeJSON(w, status, map[string]any{"ok": false, "code": code, "error": err.Error()})
		return
	}
	s.log.Info("dashboard call", "user", sess.User, "role", sess.Role, "tool", tool)
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "result": res})
}
