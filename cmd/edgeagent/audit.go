package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/localadmin"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

func init() {
	var (
		boardPath string
		limit     int
		tool      string
		asJSON    bool
		since     string
		until     string
		safety    bool
	)
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Show the audit log of physical actions (who actuated what, requested and applied, result)",
		Long: `Show the last entries of the audit log the actuators keep in the board's store:
time, caller (mqtt, llm, reflex, cli, deadman, estop:<source> …), tool, the
parameters requested and applied, and the result (ok, refused, failed),
and the administration (tools.disable, plugins.load, config.reload …).
--since and --until take RFC 3339 times (2026-03-01T12:00:00Z), dates
(2026-03-01, local midnight) or durations back from now (2h, 30m).

Retention (plugins.actuators.audit_max_age / audit_max_mb, default 30 days /
50 MB) evicts the oldest routine entries first; e-stops, resets, refusals and
admin actions go last, and every eviction is an audit.evicted entry.

The store (edgeagent.db, and the log files in edgeagent.db.logs/) is held
locked by a running agent. While the agent runs, audit asks it (audit.query)
through its local admin socket, data_dir/admin.sock, open to the agent's user
and root; from elsewhere use the admin skill over MQTT, e.g.
{"id":"1","op":"audit","params":{"limit":20}} on the admin topic.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if limit < 1 {
				return fmt.Errorf("--limit must be at least 1")
			}
			q := actuator.Query{Limit: limit, Tool: tool, SafetyOnly: safety}
			var err error
			if q.Since, err = parseWhen("--since", since, time.Now()); err != nil {
				return err
			}
			if q.Until, err = parseWhen("--until", until, time.Now()); err != nil {
				return err
			}
			cfg, err := board.Load(boardPath)
			if err != nil {
				return err
			}
			// The same file node.New opens.
			path := filepath.Join(cfg.DataDir, "edgeagent.db")
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no audit log yet: %s does not exist (the agent has not run with this board)", path)
			}
			var entries []actuator.Entry
			st, err := store.Open(path)
			switch {
			case errors.Is(err, store.ErrLocked):
				// The running agent holds the store: ask it, through its
				// local admin socket.
				if entries, err = auditThroughAgent(cmd, cfg, q); err != nil {
					return err
				}
			case err != nil:
				return err
			default:
				defer st.Close()
				if entries, err = actuator.ReadAudit(st, q, max(limit, 1000000)); err != nil {
					return err
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				if entries == nil {
					entries = []actuator.Entry{}
				}
				return writeJSON(out, entries)
			}
			if len(entries) == 0 {
				fmt.Fprintln(out, "the audit log is empty")
				return nil
			}
			w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIME\tCALLER\tTOOL\tRESULT\tREQUESTED\tAPPLIED\tNOTES")
			for _, e := range entries {
				notes := strings.Join(e.Notes, "; ")
				if e.Error != "" {
					notes = strings.TrimPrefix(strings.Join([]string{notes, e.Error}, "; "), "; ")
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Time.Local().Format(time.DateTime+".000"),
					callerOf(e), e.Tool, e.Result, dash(string(e.Requested)), dash(string(e.Applied)), notes)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file (its data_dir holds the store)")
	cmd.Flags().IntVar(&limit, "limit", 50, "number of entries, newest last")
	cmd.Flags().StringVar(&tool, "tool", "", "only this tool (drive.drive) or this actuator's tools (drive)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as JSON")
	cmd.Flags().StringVar(&since, "since", "", "only entries at or after this time (RFC 3339, a date, or a duration back from now: 2h)")
	cmd.Flags().StringVar(&until, "until", "", "only entries before this time (same forms as --since)")
	cmd.Flags().BoolVar(&safety, "safety", false, "only e-stops, resets, refusals and admin actions")
	rootCmd.AddCommand(cmd)
}

// auditThroughAgent reads the audit log of the agent that holds the store,
// with audit.query through its local admin socket.
func auditThroughAgent(cmd *cobra.Command, cfg *board.Config, q actuator.Query) ([]actuator.Entry, error) {
	p := map[string]any{"limit": min(q.Limit, 1000), "tool": q.Tool, "safety": q.SafetyOnly}
	if !q.Since.IsZero() {
		p["since"] = q.Since.Format(time.RFC3339Nano)
	}
	if !q.Until.IsZero() {
		p["until"] = q.Until.Format(time.RFC3339Nano)
	}
	params, _ := json.Marshal(p) // plain values: always encodes
	ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
	defer cancel()
	r, err := localadmin.Call(ctx, cfg.DataDir, "audit.query", params)
	if errors.Is(err, localadmin.ErrNoAgent) {
		return nil, fmt.Errorf("the store is held by a running agent that has no local admin socket: read the audit log through it (admin skill audit.query, e.g. over MQTT: {\"id\":\"1\",\"op\":\"audit\",\"params\":{\"limit\":%d}} on %sadmin), or stop the agent first", q.Limit, cfg.MQTT.Prefix)
	}
	if err != nil {
		return nil, err
	}
	if !r.OK {
		return nil, replyError(r.Error, r.Code, r.Paths)
	}
	var entries []actuator.Entry
	if err := json.Unmarshal(r.Result, &entries); err != nil {
		return nil, fmt.Errorf("the agent's audit.query reply: %w", err)
	}
	return entries, nil
}

// parseWhen reads a --since/--until value: RFC 3339, a date (local
// midnight) or a duration back from now.
func parseWhen(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, time.Local); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%s: want an RFC 3339 time (2026-03-01T12:00:00Z), a date (2026-03-01) or a duration such as 2h", flag)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// callerOf is an entry's caller, with the fleet or group a command came
// by ("mqtt · group north").
func callerOf(e actuator.Entry) string {
	if e.Via != nil {
		return e.Caller + " · " + e.Via.String()
	}
	return dash(e.Caller)
}
