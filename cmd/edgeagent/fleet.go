package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/fleet"
	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/plugin/mqttplane"
)

func init() {
	var (
		o                 fleet.Options
		boardPath         string
		ca, cert, key     string
		timeout, window   time.Duration
		asJSON            bool
		passwordFromStdin bool
	)
	root := &cobra.Command{
		Use:   "fleet",
		Short: "Operate a fleet over MQTT: list robots, call a tool on a group, stop them all",
		Long: `fleet talks only MQTT, so it runs from a laptop against the broker (or cluster) the
robots use. Name the broker with --broker (and --username/--password/--ca/--cert/--key),
or take it from a board file with --board. Robots join a fleet with the board's
fleet: {name, groups} block (mqtt/README.md, "Fleets").`,
	}
	pf := root.PersistentFlags()
	pf.StringVar(&o.Broker, "broker", "", "broker URL, e.g. tcp://broker.lan:1883 or ssl://broker.lan:8883")
	pf.StringVar(&o.Username, "username", "", "MQTT username")
	pf.StringVar(&o.Password, "password", "", "MQTT password (or $EDGEAGENT_MQTT_PASSWORD)")
	pf.BoolVar(&passwordFromStdin, "password-stdin", false, "read the password from standard input")
	pf.StringVar(&ca, "ca", "", "CA certificate (PEM) for ssl:// brokers")
	pf.StringVar(&cert, "cert", "", "client certificate (PEM)")
	pf.StringVar(&key, "key", "", "client key (PEM)")
	pf.StringVar(&o.Root, "root", "", `topic root shared by the robots (default "edgeagent/", or the board's prefix without its device level)`)
	pf.StringVar(&boardPath, "board", "", "take the broker, credentials and topic root from this board file")
	pf.DurationVar(&timeout, "timeout", 5*time.Second, "how long to wait for answers")
	pf.BoolVar(&asJSON, "json", false, "print JSON")

	dial := func(ctx context.Context) (*fleet.Client, error) {
		tlsFiles := mqtt.TLS{CA: ca, Cert: cert, Key: key}
		if boardPath != "" {
			b, err := board.Load(boardPath)
			if err != nil {
				return nil, err
			}
			mc, err := mqttplane.Config(b)
			if err != nil {
				return nil, err
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
			return nil, errors.New("say which broker: --broker URL or --board FILE")
		}
		if o.Password == "" {
			o.Password = os.Getenv("EDGEAGENT_MQTT_PASSWORD")
		}
		if passwordFromStdin {
			var line string
			if _, err := fmt.Fscanln(os.Stdin, &line); err != nil {
				return nil, fmt.Errorf("reading the password from stdin: %w", err)
			}
			o.Password = line
		}
		if strings.HasPrefix(o.Broker, "ssl://") {
			tc, err := mqtt.TLSConfig(tlsFiles)
			if err != nil {
				return nil, err
			}
			o.TLS = tc
		}
		return fleet.Dial(ctx, o)
	}

	// session runs fn with a client connected for at most d.
	session := func(cmd *cobra.Command, d time.Duration, fn func(context.Context, *fleet.Client) error) error {
		ctx, cancel := context.WithTimeout(cmd.Context(), d)
		defer cancel()
		c, err := dial(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		return fn(ctx, c)
	}

	printJSON := func(v any) error { return writeJSON(os.Stdout, v) }

	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the robots on the broker: status, e-stop, board, version, fleet and groups",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return session(cmd, timeout+window, func(ctx context.Context, c *fleet.Client) error {
				robots, err := c.List(ctx, window)
				if err != nil {
					return err
				}
				if asJSON {
					return printJSON(robots)
				}
				return fleet.WriteRobots(os.Stdout, robots)
			})
		},
	}
	ls.Flags().DurationVar(&window, "wait", 500*time.Millisecond, "how long to listen for announcements")

	// online lists the robots of to that announce themselves, the members a
	// command to to expects an answer from.
	online := func(ctx context.Context, c *fleet.Client, to fleet.Target) ([]string, error) {
		robots, err := c.List(ctx, 300*time.Millisecond)
		if err != nil {
			return nil, err
		}
		return fleet.Members(robots, to), nil
	}

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
			return session(cmd, timeout, func(ctx context.Context, c *fleet.Client) error {
				members, err := online(ctx, c, to)
				if err != nil {
					return err
				}
				answers, dups, err := c.Call(ctx, to, args[1], params, len(members))
				if asJSON {
					return errors.Join(printJSON(map[string]any{"expected": members, "answers": answers, "duplicates": dups}), err)
				}
				if werr := fleet.WriteAnswers(os.Stdout, answers, members); werr != nil {
					return werr
				}
				fmt.Printf("%d of %d online members answered", len(answers), len(members))
				if dups > 0 {
					fmt.Printf("; %d duplicate answers", dups)
				}
				fmt.Println()
				if len(answers) < len(members) {
					return fmt.Errorf("%d members did not answer within %v", len(members)-len(answers), timeout)
				}
				return nil
			})
		},
	}
	call.Flags().StringVar(&fleetName, "fleet", "", `the fleet to address when GROUP is "-"`)

	estop := &cobra.Command{
		Use:   "estop FLEET",
		Short: "Stop every robot of a fleet (each latches as its own e-stop does) and wait for their acknowledgements",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return session(cmd, timeout, func(ctx context.Context, c *fleet.Client) error {
				members, err := online(ctx, c, fleet.Target{Fleet: args[0]})
				if err != nil {
					return err
				}
				answers, err := c.EStop(ctx, args[0], len(members))
				if asJSON {
					return errors.Join(printJSON(map[string]any{"expected": members, "answers": answers}), err)
				}
				if werr := fleet.WriteAnswers(os.Stdout, answers, members); werr != nil {
					return werr
				}
				fmt.Printf("%d of %d online robots of %s acknowledged the e-stop\n", len(answers), len(members), args[0])
				return err
			})
		},
	}

	status := &cobra.Command{
		Use:   "status ROBOT",
		Short: "Show one robot's agent.status",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return session(cmd, timeout, func(ctx context.Context, c *fleet.Client) error {
				r, err := c.Status(ctx, args[0])
				if err != nil {
					return err
				}
				if !r.OK {
					return fmt.Errorf("%s: %s", r.Code, r.Error)
				}
				return printJSON(r.Result)
			})
		},
	}
	root.AddCommand(ls, call, estop, status)
	rootCmd.AddCommand(root)
}
