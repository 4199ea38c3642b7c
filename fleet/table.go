package fleet

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

func sortRobots(rs []Robot) {
	slices.SortFunc(rs, func(a, b Robot) int { return cmp.Compare(a.ID, b.ID) })
}

// WriteRobots prints robots as a table.
func WriteRobots(w io.Writer, rs []Robot) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tE-STOP\tPLATFORM\tVERSION\tFLEET\tGROUPS\tSTARTED")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.ID, r.Status, dash(r.EStop), dash(strings.Trim(r.Platform+"/"+r.Model, "/")),
			dash(r.Version), dash(r.Fleet), dash(strings.Join(r.Groups, ",")), dash(r.Started))
	}
	return tw.Flush()
}

// WriteOutcome prints who answered what, slowest last, then who did not
// answer and who is offline.
func WriteOutcome(w io.Writer, o Outcome) error {
	answers := slices.Clone(o.Answers)
	slices.SortFunc(answers, func(a, b Answer) int { return cmp.Compare(a.After, b.After) })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ROBOT\tOK\tAFTER\tRESULT")
	for _, a := range answers {
		res := a.Reply.Error
		if a.Reply.OK {
			b, _ := json.Marshal(a.Reply.Result) // it was decoded from JSON
			res = string(b)
		} else if a.Reply.Code != "" {
			res = a.Reply.Code + ": " + res
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", a.Robot, a.Reply.OK, a.After.Round(100*time.Microsecond), truncate(res, 80))
	}
	for _, id := range o.Silent() {
		fmt.Fprintf(tw, "%s\t-\t-\tno answer\n", id)
	}
	for _, id := range o.Offline() {
		fmt.Fprintf(tw, "%s\t-\t-\toffline\n", id)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// Members are the robots of a listing that belong to a target and are
// online: whom a command should reach.
func Members(rs []Robot, to Target) []string { return NewOutcome(rs, to).Online }
