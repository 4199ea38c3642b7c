package main

import (
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/internal/registry"
	"github.com/edgeagent/edgeagent/plugin"
	"github.com/edgeagent/edgeagent/sensors"
	"github.com/edgeagent/edgeagent/tools/actuator"
)

// Stamped by scripts/cross-compile.sh through -ldflags -X.
var (
	version = "dev"
	commit  = "unknown"
	date    = "unknown"
)

// The table of what every build profile holds (profiles_gen.go) is written
// by a test from the binaries themselves, and checked by the same tests, so
// it cannot drift from the files' build constraints.
//go:generate go test -run TestProfileTable -update .

// holdings is what a binary of one build profile holds: the kinds and
// plugins its sensor_*, actuator_* and plugin_* files import, and its
// commands.
type holdings struct {
	SensorKinds   []string `json:"sensor_kinds"`
	ActuatorKinds []string `json:"actuator_kinds"`
	Plugins       []string `json:"plugins"`
	Commands      []string `json:"commands"`
}

// held is what this binary holds.
func held() holdings {
	return holdings{SensorKinds: sensors.Kinds(), ActuatorKinds: actuator.Kinds(), Plugins: plugin.Names(), Commands: commandPaths(rootCmd)}
}

// commandPaths lists the commands below c by their path ("wakeword
// test"), sorted; cobra's own help and completion are not ours.
func commandPaths(c *cobra.Command) []string {
	var out []string
	for _, sub := range c.Commands() {
		if sub.Name() == "help" || sub.Name() == "completion" {
			continue
		}
		out = append(out, strings.TrimPrefix(sub.CommandPath(), rootCmd.Name()+" "))
		out = append(out, commandPaths(sub)...)
	}
	slices.Sort(out)
	return out
}

// of returns the names held of one registry's kind of thing.
func (h holdings) of(what string) []string {
	switch what {
	case registry.SensorKind:
		return h.SensorKinds
	case registry.ActuatorKind:
		return h.ActuatorKinds
	case registry.Plugin:
		return h.Plugins
	case registry.Command:
		return h.Commands
	}
	return nil
}

// inProfiles lists the build profiles holding name, from the generated
// table.
func inProfiles(what, name string) []string {
	var in []string
	for _, p := range slices.Sorted(maps.Keys(profileTable)) {
		if slices.Contains(profileTable[p].of(what), name) {
			in = append(in, p)
		}
	}
	return in
}

func init() {
	registry.UseProfiles(profile, inProfiles)
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print version, commit, build date and build profile, and the kinds, plugins and commands this binary holds",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			h := held()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), struct {
					Version string `json:"version"`
					Commit  string `json:"commit"`
					Date    string `json:"date"`
					Go      string `json:"go"`
					Profile string `json:"profile"`
					holdings
				}{version, commit, date, runtime.Version(), profile, h})
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "edgeagent %s (commit %s, built %s, %s %s/%s), build profile %s\n",
				version, commit, date, runtime.Version(), runtime.GOOS, runtime.GOARCH, profile)
			for _, l := range []struct {
				name  string
				names []string
			}{{"sensor kinds", h.SensorKinds}, {"actuator kinds", h.ActuatorKinds}, {"plugins", h.Plugins}, {"commands", h.Commands}} {
				fmt.Fprintf(w, "%-15s %s\n", l.name+":", strings.Join(l.names, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	rootCmd.AddCommand(cmd)
}
