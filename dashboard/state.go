package dashboard

import (
	"bytes"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/edgeagent/edgeagent/clock"
	"github.com/edgeagent/edgeagent/hooks"
	"github.com/edgeagent/edgeagent/worldmodel"
)

// line is a threshold drawn on a sensor's plot.
type line struct {
	Value float64 `json:"value"`
	Kind  string  `json:"kind"` // above | below
	Event string  `json:"event,omitempty"`
}

type reading struct {
	Source string   `json:"src"`
	Seq    uint64   `json:"seq"`
	Time   int64    `json:"ts"`
	Value  *float64 `json:"v,omitempty"`
	Unit   string   `json:"u,omitempty"`
	Text   string   `json:"text,omitempty"`
	Kind   string   `json:"kind"`
}

// handleState is what the page starts from before the live channel: the
// newest value of every source, the states, the e-stop, and the recent
// stream as the live channel would have sent it (stateItems).
func (s *server) handleState(w http.ResponseWriter, _ *http.Request, _ session) {
	var readings []reading
	for _, o := range s.world.LatestAll() {
		r := reading{Source: o.Source, Seq: o.Seq, Time: o.Time.UnixMilli(), Unit: o.Unit, Text: o.Text, Kind: o.Kind.String()}
		if o.Kind == worldmodel.Reading {
			v := o.Value
			r.Value = &v
		}
		if o.Kind == worldmodel.BlobRef || o.Kind == worldmodel.EventRef {
			continue
		}
		readings = append(readings, r)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"device": s.board.Device, "cameras": s.cameras(), "readings": readings, "thresholds": s.thresholds(),
		"health": s.world.Health(), "actuators": s.world.Actuators(), "estop": estopState(s.world),
		"items": stateItems(s.world), "version": s.world.Version(),
		"camera_motion": s.cameraMotion(), "history_s": s.opts.History.Seconds(),
	})
}

// handleRecord is one journal record in full (an LLM exchange's prompt and
// answer, which the live channel leaves out).
func (s *server) handleRecord(w http.ResponseWriter, r *http.Request, _ session) {
	seq, err := strconv.ParseUint(r.PathValue("seq"), 10, 64)
	if err != nil || seq == 0 {
		httpError(w, http.StatusBadRequest, "seq: a record's sequence number")
		return
	}
	recs := s.world.Records(seq-1, 0)
	if len(recs) == 0 || recs[0].Seq != seq {
		httpError(w, http.StatusNotFound, "no such record (the journal keeps the newest ones)")
		return
	}
	rec := recs[0]
	writeJSON(w, http.StatusOK, map[string]any{"seq": rec.Seq, "ts": rec.Time.UnixMilli(), "kind": rec.Kind, "src": rec.Source, "data": rec.Data})
}

// rawList writes already-encoded JSON objects as an array.
type rawList [][]byte

func (l rawList) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, m := range l {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m)
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// thresholds are the board's threshold bounds per source.
func (s *server) thresholds() map[string][]line {
	out := map[string][]line{}
	for _, sc := range s.board.Sensors {
		for _, t := range sc.Thresholds {
			src := sc.Name + "." + t.Quantity
			switch {
			case t.Above != nil:
				out[src] = append(out[src], line{Value: *t.Above, Kind: "above", Event: t.Event})
			case t.Below != nil:
				out[src] = append(out[src], line{Value: *t.Below, Kind: "below", Event: t.Event})
			}
		}
	}
	return out
}

// series is one source's history as uPlot wants it: times and values.
type series struct {
	Unit string    `json:"u,omitempty"`
	T    []float64 `json:"t"` // unix seconds
	V    []float64 `json:"v"`
}

// handleHistory is the last dashboard.history of every numeric source.
func (s *server) handleHistory(w http.ResponseWriter, _ *http.Request, _ session) {
	from := s.clk.Now().Add(-s.opts.History)
	out := map[string]*series{}
	for _, src := range s.world.Sources() {
		for _, o := range s.world.Window(src, from, time.Time{}) {
			if o.Kind != worldmodel.Reading || o.Value != o.Value {
				continue
			}
			sr := out[src]
			if sr == nil {
				sr = &series{Unit: o.Unit}
				out[src] = sr
			}
			sr.T = append(sr.T, float64(o.Time.UnixMilli())/1000)
			sr.V = append(sr.V, o.Value)
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleStatus is agent.status with what the process costs and what the
// dashboard itself sent and dropped.
func (s *server) handleStatus(w http.ResponseWriter, _ *http.Request, _ session) {
	ws := s.world.Stats()
	writeJSON(w, http.StatusOK, map[string]any{
		"agent":     s.host.Agent().Status(),
		"process":   processStats(),
		"world":     map[string]any{"sources": ws.Sources, "held": ws.Held, "dropped": ws.Dropped, "events": ws.Events, "bytes": ws.Bytes},
		"dashboard": s.status(),
	})
}

// dashStatus is the dashboard's component of agent.status.
type dashStatus struct {
	URL     string `json:"url,omitempty"`
	Error   string `json:"error,omitempty"` // why it is not serving
	Clients int    `json:"live_clients"`
	Streams int64  `json:"camera_streams"`
	Sent    uint64 `json:"live_sent"`
	Dropped uint64 `json:"live_dropped"` // messages a slow client did not get
	Missed  uint64 `json:"live_missed"`  // items the rings overwrote before the pump read them
	Frames  uint64 `json:"frames_sent"`
}

func (s *server) status() dashStatus {
	return dashStatus{Clients: s.hub.clientCount(), Streams: s.streams.Load(), Sent: s.hub.sent.Load(),
		Dropped: s.hub.dropped.Load(), Missed: s.hub.missed.Load(), Frames: s.frames.Load()}
}

// processStats: CPU time and resident memory, for the status page. The
// page divides CPU time by the wall time between two reads, so "now" is
// the wall clock's, whatever clock the agent runs on.
func processStats() map[string]any {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // RUSAGE_SELF on our own process does not fail
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	out := map[string]any{"cpu_s": cpu.Seconds(), "goroutines": runtime.NumGoroutine(), "cores": runtime.NumCPU(),
		"now": float64(clock.Real().Now().UnixMilli()) / 1000}
	if rss, ok := residentBytes(); ok {
		out["rss_bytes"] = rss
	}
	return out
}

// residentBytes reads VmRSS from /proc (Linux, which is what the boards
// run); elsewhere the status page goes without it.
func residentBytes() (int64, bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for l := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// handleConfig is the running board config, secrets redacted, and what
// the plugins said when they were built.
func (s *server) handleConfig(w http.ResponseWriter, _ *http.Request, _ session) {
	out := map[string]any{"check": "ok: the running config passed the same checks as `edgeagent check` when it was loaded"}
	if y, err := s.board.Marshal(); err != nil {
		out["error"] = "the running config cannot be printed"
	} else {
		out["yaml"] = redact(y)
	}
	var plugins []hooks.Info
	for _, p := range s.host.Plugins() {
		plugins = append(plugins, p.Info())
	}
	out["plugins"] = plugins
	writeJSON(w, http.StatusOK, out)
}

// redact replaces the values of secret-looking keys (passwords, hashes,
// tokens) so that the config page never shows them.
func redact(y []byte) string {
	var doc any
	if err := yaml.Unmarshal(y, &doc); err != nil {
		return "(the config cannot be shown)"
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, c := range t {
				lk := strings.ToLower(k)
				if strings.Contains(lk, "password") || strings.Contains(lk, "secret") || lk == "token" ||
					strings.HasSuffix(lk, "_token") || lk == "sha256" || lk == "key" {
					if c != nil && c != "" {
						t[k] = "(redacted)"
					}
					continue
				}
				t[k] = walk(c)
			}
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
		}
		return v
	}
	out, err := yaml.Marshal(walk(doc))
	if err != nil {
		return "(the config cannot be shown)"
	}
	return string(out)
}
