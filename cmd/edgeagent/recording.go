package main

import (
	"bufio"
	"encoding/binary"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/record"
	"github.com/edgeagent/edgeagent/record/recording"
	"github.com/edgeagent/edgeagent/sensors/mic"
	"github.com/edgeagent/edgeagent/sensors/mic/audio"
)

func init() {
	cmd := &cobra.Command{
		Use:   "recording",
		Short: "Inspect MCAP recordings without Foxglove (info, export)",
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "info FILE",
		Short: "Channels, message counts, duration, size and drops of a recording",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var o origins
			in, err := recording.Read(args[0], o.add)
			if err != nil {
				return err
			}
			printInfo(cmd.OutOrStdout(), in, &o)
			return nil
		},
	})
	var channel, format, out string
	export := &cobra.Command{
		Use:   "export FILE --channel TOPIC",
		Short: "Write one channel's messages as CSV or JSON lines (an audio channel as WAV)",
		Long: `Write one channel's messages as CSV (a time column, then one column per
top-level field; nested values as JSON) or as JSON lines
({"time":…,"topic":…,"message":{…}}). An audio channel (/audio/<mic>.audio,
recorded with record.audio) exports as a WAV file with --format wav: the
speech segments one after the other, without the silences between them.
The topics are listed by 'edgeagent recording info'.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if channel == "" {
				return fmt.Errorf("--channel is required (the topics are listed by 'edgeagent recording info %s')", args[0])
			}
			if format != "csv" && format != "jsonl" && format != "wav" {
				return fmt.Errorf("--format %q: want csv, jsonl or wav", format)
			}
			w := cmd.OutOrStdout()
			if out != "" && out != "-" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			return exportChannel(w, args[0], channel, format)
		},
	}
	export.Flags().StringVar(&channel, "channel", "", "the topic to export, e.g. /obs/env.temperature")
	export.Flags().StringVar(&format, "format", "csv", "csv, jsonl, or wav (audio channels)")
	export.Flags().StringVar(&out, "out", "", "write to this new file instead of stdout")
	cmd.AddCommand(export)
	rootCmd.AddCommand(cmd)
}

func printInfo(w io.Writer, in *recording.Info, o *origins) {
	state := "complete"
	if !in.Complete {
		state = "cut short: " + in.Damage
	}
	fmt.Fprintf(w, "file      %s (%s, %s)\n", in.Path, humanBytes(uint64(in.Size)), state)
	if b := in.Meta["edgeagent"]; b != nil {
		build := "edgeagent " + b["version"]
		if rev := b["revision"]; rev != "" {
			build += " " + short(rev)
		}
		fmt.Fprintf(w, "device    %s (%s), %s, %s\n", b["device"], b["platform"], build, b["go"])
	}
	if in.Messages > 0 {
		fmt.Fprintf(w, "recorded  %s → %s (%s)\n", in.Start.UTC().Format(time.RFC3339), in.End.UTC().Format(time.RFC3339), in.Duration().Round(time.Millisecond))
	}
	fmt.Fprintf(w, "messages  %d on %d channels", in.Messages, len(in.Channels))
	if in.Stats != nil {
		fmt.Fprintf(w, "; dropped %d, missed %d, frames skipped %d", in.Stats["dropped"], in.Stats["missed"], in.Stats["frames_skipped"])
	} else {
		fmt.Fprint(w, "; drops unknown (no counters in the file)")
	}
	fmt.Fprintln(w)
	var names []string
	for name := range in.Attached {
		if !strings.HasPrefix(name, record.FilesPrefix) { // listed with the board's files below
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) > 0 {
		fmt.Fprintf(w, "attached  %s\n", strings.Join(names, ", "))
	}
	printBoardFiles(w, in)
	if len(o.callers) > 0 {
		fmt.Fprintf(w, "commands  %s\n", o)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOPIC\tSCHEMA\tMESSAGES\tBYTES\tRATE")
	for _, c := range in.Channels {
		rate := "-"
		if span := c.Last.Sub(c.First).Seconds(); c.Count > 1 && span > 0 {
			rate = strconv.FormatFloat(float64(c.Count-1)/span, 'f', 2, 64) + " Hz"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", c.Topic, c.Schema, c.Count, humanBytes(c.Bytes), rate)
	}
	tw.Flush()
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}

func humanBytes(n uint64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// exportChannel writes one channel. CSV needs its columns first, so it
// reads the file twice: once for the fields, once for the rows.
func exportChannel(w io.Writer, path, topic, format string) error {
	onTopic := func(fn func(recording.Msg) error) (*recording.Info, error) {
		return recording.Read(path, func(m recording.Msg) error {
			if m.Channel.Topic != topic {
				return nil
			}
			return fn(m)
		})
	}
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	var in *recording.Info
	var err error
	if format == "wav" {
		return exportWAV(bw, path, topic, onTopic)
	}
	if format == "jsonl" {
		in, err = onTopic(func(m recording.Msg) error {
			line := struct {
				Time    string          `json:"time"`
				Topic   string          `json:"topic"`
				Message json.RawMessage `json:"message"`
			}{m.Time.UTC().Format(time.RFC3339Nano), topic, m.Data}
			b, err := json.Marshal(line)
			if err != nil {
				return fmt.Errorf("message at %s is not JSON", line.Time)
			}
			bw.Write(b)
			return bw.WriteByte('\n')
		})
	} else {
		in, err = exportCSV(bw, onTopic)
	}
	if err != nil {
		return err
	}
	if in.Channel(topic) == nil {
		return fmt.Errorf("%s has no channel %q (see 'edgeagent recording info %s')", path, topic, path)
	}
	return bw.Flush()
}

func exportCSV(w io.Writer, onTopic func(func(recording.Msg) error) (*recording.Info, error)) (*recording.Info, error) {
	seen := map[string]bool{}
	var cols []string
	if _, err := onTopic(func(m recording.Msg) error {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(m.Data, &obj); err != nil {
			return fmt.Errorf("message at %s is not a JSON object", m.Time.UTC().Format(time.RFC3339Nano))
		}
		for k := range obj {
			if !seen[k] {
				seen[k] = true
				cols = append(cols, k)
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	slices.SortFunc(cols, func(a, b string) int { // seq first, then by name
		if (a == "seq") != (b == "seq") {
			if a == "seq" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	cw := csv.NewWriter(w)
	cw.Write(append([]string{"time"}, cols...))
	row := make([]string, len(cols)+1)
	in, err := onTopic(func(m recording.Msg) error {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(m.Data, &obj); err != nil {
			return fmt.Errorf("message at %s is not a JSON object", m.Time.UTC().Format(time.RFC3339Nano))
		}
		row[0] = m.Time.UTC().Format(time.RFC3339Nano)
		for i, c := range cols {
			row[i+1] = cell(obj[c])
		}
		return cw.Write(row)
	})
	cw.Flush()
	if err == nil {
		err = cw.Error()
	}
	return in, err
}

// cell is a CSV cell: strings unquoted, numbers and booleans as written,
// objects and arrays as JSON.
func cell(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	return string(v)
}

// exportWAV writes an audio channel's chunks as one WAV file.
func exportWAV(w io.Writer, path, topic string, onTopic func(func(recording.Msg) error) (*recording.Info, error)) error {
	var samples []int16
	in, err := onTopic(func(m recording.Msg) error {
		var a struct {
			MIME string `json:"mime"`
			Data []byte `json:"data"`
		}
		if err := json.Unmarshal(m.Data, &a); err != nil || m.Channel.Kind != record.KindAudio {
			return fmt.Errorf("%s is not an audio channel (message at %s)", topic, m.Time.UTC().Format(time.RFC3339Nano))
		}
		if a.MIME != mic.AudioMIME {
			return fmt.Errorf("audio at %s is %q; this export writes %s", m.Time.UTC().Format(time.RFC3339Nano), a.MIME, mic.AudioMIME)
		}
		for i := 0; i+1 < len(a.Data); i += 2 {
			samples = append(samples, int16(binary.BigEndian.Uint16(a.Data[i:])))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if in.Channel(topic) == nil {
		return fmt.Errorf("%s has no channel %s (see 'edgeagent recording info %s')", path, topic, path)
	}
	return audio.WriteWAV(w, audio.Rate, samples)
}

// printBoardFiles lists the files the recorded board names: the setting
// that names each, its size, whether the recording carries it or only its
// SHA-256 (and why), and where it was read.
func printBoardFiles(w io.Writer, in *recording.Info) {
	from := in.Meta[record.MetaFiles]
	if len(from) == 0 {
		return
	}
	fmt.Fprintln(w, "board files:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, name := range slices.Sorted(maps.Keys(from)) {
		var d record.FileDetails
		if json.Unmarshal([]byte(in.Meta[record.MetaFileDetails][name]), &d) != nil { // recorded before details
			d = record.FileDetails{Key: "-", Attached: true, Bytes: int64(in.Attached[name])}
		}
		carried, why := "attached", ""
		if _, ok := in.Attached[name]; !ok || !d.Attached {
			carried, why = "NOT in the recording", "  ("+d.Why+")"
			if d.SHA256 != "" {
				carried = "sha256 only (" + d.SHA256[:min(12, len(d.SHA256))] + ")"
			}
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\tfrom %s%s\n", name, d.Key, humanBytes(uint64(d.Bytes)), carried, from[name], why)
	}
	tw.Flush()
}
