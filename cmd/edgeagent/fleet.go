package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/fleet"
	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/plugin/mqttplane"
)

func init() { rootCmd.AddCommand(newFleetCmd()) }

// fleetCLI holds the flags every fleet subcommand shares.
type fleetCLI struct {
	o                 fleet.Options
	boardPath         string
	ca, cert, key     string
	timeout           time.Duration
	asJSON            bool
	passwordFromStdin bool
}

func newFleetCmd() *cobra.Command {
	f := &fleetCLI{}
	root := &cobra.Command{
		Use:   "fleet",
		Short: "Operate a fleet over MQTT: list robots, call a tool on a group, stop them all",
		Long: `fleet talks only MQTT, so it runs from a laptop against the broker (or cluster) the
robots use. Name the broker with --broker (and --username/--password/--ca/--cert/--key),
or take it from a board file with --board. Robots join a fleet with the board's
fleet: {name, groups} block (mqtt/README.md, "Fleets").

call and estop exit with 0 when every robot known in the group or fleet (from its
retained announcements) acknowledged, 1 when any of them refused, is offline or did
not answer in time (each is named), and 2 when no robot is in that group or fleet
(a typo: the error says which names were seen). Other failures (no broker) exit 1.`,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&f.o.Broker, "broker", "", "broker URL, e.g. tcp://broker.lan:1883 or ssl://broker.lan:8883")
	pf.StringVar(&f.o.Username, "username", "", "MQTT username")
	pf.StringVar(&f.o.Password, "password", "", "MQTT password (or $EDGEAGENT_MQTT_PASSWORD)")
	pf.BoolVar(&f.passwordFromStdin, "password-stdin", false, "read the password from standard input")
	pf.StringVar(&f.ca, "ca", "", "CA certificate (PEM) for ssl:// brokers")
	pf.StringVar(&f.cert, "cert", "", "client certificate (PEM)")
	pf.StringVar(&f.key, "key", "", "client key (PEM)")
	pf.StringVar(&f.o.Root, "root", "", `topic root shared by the robots (default "edgeagent/", or the board's prefix without its device level)`)
	pf.StringVar(&f.boardPath, "board", "", "take the broker, credentials and topic root from this board file")
	pf.DurationVar(&f.timeout, "timeout", 5*time.Second, "how long to wait for answers")
	pf.BoolVar(&f.asJSON, "json", false, "print JSON")
	root.AddCommand(f.lsCmd(), f.callCmd(), f.estopCmd(), f.statusCmd())
	return root
}

// options completes the connection options from the board, the
// environment and stdin.
func (f *fleetCLI) options() (fleet.Options, error) {
	o := f.o
	tlsFiles := mqtt.TLS{CA: f.ca, Cert: f.cert, Key: f.key}
	if f.boardPath != "" {
		b, err := board.Load(f.boardPath)
		if err != nil {
			return o, err
		}
		mc, err := mqttplane.Config(b)
		if err != nil {
			return o, err
		}
		if o.Broker == "" {
			o.Broker = mc.BrokerURL()
		}
		if o.Username == "" {
			o.Username, o.Password = mc.Username, mc.Password
		}
		if o.Root == "" {
			o.Root = mc.FleetRoot()
		}
		if tlsFiles == (mqtt.TLS{}) {
			tlsFiles = mc.TLS
		}
	}
	if o.Broker == "" {
		return o, errors.New("say which broker: --broker URL or --board FILE")
	}
	if o.Password == "" {
		o.Password = os.Getenv("EDGEAGENT_MQTT_PASSWORD")
	}
	if f.passwordFromStdin {
		var line string
		if _, err := fmt.Fscanln(os.Stdin, &line); err != nil {
			return o, fmt.Errorf("reading the password from stdin: %w", err)
		}
		o.Password = line
	}
	if strings.HasPrefix(o.Broker, "ssl://") {
		tc, err := mqtt.TLSConfig(tlsFiles)
		if err != nil {
			return o, err
		}
		o.TLS = tc
	}
	return o, nil
}

// session runs fn with a client connected for at most d.
func (f *fleetCLI) session(cmd *cobra.Command, d time.Duration, fn func(context.Context, *fleet.Client) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), d)
	defer cancel()
	o, err := f.options()
	if err != nil {
		return err
	}
	c, err := fleet.Dial(ctx, o)
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(ctx, c)
}

// listWindow is how long call and estop listen for the robots'
// announcements (retained: they arrive at once) before sending.
const listWindow = 300 * time.Millisecond

// send lists the robots of to, sends the command with send and reports:
// the table (or JSON) on stdout, an *fleet.ExitError naming the robots
// that did not acknowledge. The command is sent even when the listing
// knows nobody there (an e-stop must not depend on a listing), but only
// the online robots are waited for: the others cannot answer now.
func (f *fleetCLI) send(ctx context.Context, w io.Writer, c *fleet.Client, to fleet.Target, what string,
	send func(expect int) ([]fleet.Answer, int, error)) error {
	robots, err := c.List(ctx, listWindow)
	if err != nil {
		return err
	}
	out := fleet.NewOutcome(robots, to)
	out.Answers, out.Duplicates, err = send(len(out.Online))
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err // not sent (the broker went away); a timeout is told by Silent
	}
	if f.asJSON {
		return errors.Join(writeJSON(w, map[string]any{"known": out.Known, "online": out.Online,
			"answers": out.Answers, "duplicates": out.Duplicates, "refused": out.Refused(),
			"offline": out.Offline(), "no_answer": out.Silent()}), out.Err())
	}
	if len(out.Known) > 0 {
		if err := fleet.WriteOutcome(w, out); err != nil {
			return err
		}
		fmt.Fprintf(w, "%d of %d robots of %s %s", len(out.Answers)-len(out.Refused()), len(out.Known), to, what)
		if out.Duplicates > 0 {
			fmt.Fprintf(w, "; %d duplicate answers", out.Duplicates)
		}
		fmt.Fprintln(w)
	}
	return out.Err()
}

func (f *fleetCLI) lsCmd() *cobra.Command {
	var window time.Duration
	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the robots on the broker: status, e-stop, board, version, fleet and groups",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.session(cmd, f.timeout+window, func(ctx context.Context, c *fleet.Client) error {
				robots, err := c.List(ctx, window)
				if err != nil {
					return err
				}
				if f.asJSON {
					return writeJSON(cmd.OutOrStdout(), robots)
				}
				return fleet.WriteRobots(cmd.OutOrStdout(), robots)
			})
		},
	}
	ls.Flags().DurationVar(&window, "wait", 500*time.Millisecond, "how long to listen for announcements")
	return ls
}

func (f *fleetCLI) callCmd() *cobra.Command {
	var fleetName string
	call := &cobra.Command{
		Use:   "call GROUP TOOL [PARAMS_JSON]",
		Short: "Call a tool on every robot of a group (or the fleet: --fleet NAME and GROUP \"-\") and print who answered what",
		Args:  cobra.RangeArgs(2, 3),
		RunE: func(cmd *cobra.Command, args []string) error {
			to := fleet.Target{Group: args[0]}
			if args[0] == "-" {
				to = fleet.Target{Fleet: fleetName}
			}
			params := json.RawMessage(`{}`)
			if len(args) == 3 {
				params = json.RawMessage(args[2])
				if !json.Valid(params) {
					return errors.New("PARAMS_JSON is not valid JSON")
				}
			}
			return f.session(cmd, f.timeout, func(ctx context.Context, c *fleet.Client) error {
				return f.send(ctx, cmd.OutOrStdout(), c, to, "ran "+args[1], func(expect int) ([]fleet.Answer, int, error) {
					return c.Call(ctx, to, args[1], params, expect)
				})
			})
		},
	}
	call.Flags().StringVar(&fleetName, "fleet", "", `the fleet to address when GROUP is "-"`)
	return call
}

func (f *fleetCLI) estopCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "estop FLEET",
		Short: "Stop every robot of a fleet (each latches as its own e-stop does) and wait for their acknowledgements",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			to := fleet.Target{Fleet: args[0]}
			return f.session(cmd, f.timeout, func(ctx context.Context, c *fleet.Client) error {
				return f.send(ctx, cmd.OutOrStdout(), c, to, "acknowledged the e-stop", func(expect int) ([]fleet.Answer, int, error) {
					answers, err := c.EStop(ctx, args[0], expect)
					return answers, 0, err
				})
			})
		},
	}
}

func (f *fleetCLI) statusCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "status ROBOT",
		Short: "Show one robot's agent.status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.session(cmd, f.timeout, func(ctx context.Context, c *fleet.Client) error {
				r, err := c.Status(ctx, args[0])
				if err != nil {
					return err
				}
				if !r.OK {
					return fmt.Errorf("%s: %s", r.Code, r.Error)
				}
				return writeJSON(cmd.OutOrStdout(), r.Result)
			})
		},
	}
}
