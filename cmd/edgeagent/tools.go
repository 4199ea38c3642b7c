package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/board"
	"github.com/edgeagent/edgeagent/localadmin"
	"github.com/edgeagent/edgeagent/mqtt"
	"github.com/edgeagent/edgeagent/plugin/mqttplane"
	"github.com/edgeagent/edgeagent/store"
	"github.com/edgeagent/edgeagent/tools"
)

func init() {
	var boardPath string
	var asJSON bool
	list := &cobra.Command{
		Use:   "tools",
		Short: "List the tools of a board (skills and internal tools)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, _, err := loadNode(boardPath, true)
			if err != nil {
				return err
			}
			defer n.Close()
			specs := n.Tools.List()
			if asJSON {
				return writeJSON(cmd.OutOrStdout(), specs)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "NAME\tKIND\tPERMISSION\tDESCRIPTION")
			for _, s := range specs {
				kind := "skill"
				if s.Internal {
					kind = "internal"
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", s.Name, kind, s.Permission, s.Description)
			}
			return w.Flush()
		},
	}
	list.Flags().StringVar(&boardPath, "board", defaultBoard, "board config file")
	list.Flags().BoolVar(&asJSON, "json", false, "print the specs as JSON")
	rootCmd.AddCommand(list)

	var invokeBoard string
	var invokeAdmin bool
	var invokeTimeout time.Duration
	invoke := &cobra.Command{
		Use:   "invoke TOOL [PARAMS_JSON]",
		Short: "Run one tool against the board (sensors running) and print the result",
		Long: `Run one tool against the board (sensors running) and print the result.

When an agent already runs with this board (it holds the store), the call is
sent to it through its local admin socket (data_dir/admin.sock, the agent's
user and root only) as the cli caller, with the CLI's permissions: estop.reset,
audit.query and config.reload work while it runs. Without the socket (another
machine's board file, another user) the call goes over MQTT and the agent
applies the mqtt caller's permissions (permissions.mqtt); --admin sends it on
the admin topic, which carries the admin permission where the agent accepts it
(its embedded broker; the board's mqtt.username must be an admin user when the
broker has users).`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := json.RawMessage(`{}`)
			if len(args) == 2 {
				params = json.RawMessage(args[1])
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			n, _, err := loadNode(invokeBoard, false)
			if errors.Is(err, store.ErrLocked) {
				r, err := callLocal(ctx, cmd, invokeBoard, args[0], params, invokeTimeout)
				if errors.Is(err, localadmin.ErrNoAgent) {
					return invokeOverMQTT(ctx, cmd, invokeBoard, args[0], params, invokeAdmin, invokeTimeout)
				}
				if err != nil {
					return err
				}
				return printLocal(cmd, r)
			}
			if err != nil {
				return err
			}
			var res tools.Result
			ierr := runOnce(ctx, n, func(ctx context.Context) (err error) {
				res, err = n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: args[0], Params: params})
				return err
			})
			if ierr != nil {
				if te, ok := ierr.(*tools.Error); ok && len(te.Paths) > 0 {
					return fmt.Errorf("%w (paths: %s)", ierr, strings.Join(te.Paths, ", "))
				}
				return ierr
			}
			return writeJSON(cmd.OutOrStdout(), res)
		},
	}
	invoke.Flags().StringVar(&invokeBoard, "board", defaultBoard, "board config file")
	invoke.Flags().BoolVar(&invokeAdmin, "admin", false, "when forwarding to a running agent over MQTT, use the admin topic")
	invoke.Flags().DurationVar(&invokeTimeout, "timeout", 30*time.Second, "when forwarding to a running agent over MQTT, how long to wait for the reply")
	rootCmd.AddCommand(invoke)
}

// callLocal sends the call to the agent that runs with the board through
// its local admin socket; localadmin.ErrNoAgent when there is none.
func callLocal(ctx context.Context, cmd *cobra.Command, path, tool string, params json.RawMessage, timeout time.Duration) (localadmin.Reply, error) {
	b, err := board.Load(path)
	if err != nil {
		return localadmin.Reply{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := localadmin.Call(ctx, b.DataDir, tool, params)
	if err == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "edgeagent: an agent is running with %s; the call went through its admin socket %s\n", path, localadmin.Path(b.DataDir))
	}
	return r, err
}

// printLocal prints a reply from the admin socket, or makes its error ours.
func printLocal(cmd *cobra.Command, r localadmin.Reply) error {
	if !r.OK {
		return replyError(r.Error, r.Code, r.Paths)
	}
	var v any
	if err := json.Unmarshal(r.Result, &v); err != nil {
		return fmt.Errorf("the agent's reply: %w", err)
	}
	return writeJSON(cmd.OutOrStdout(), v)
}

// invokeOverMQTT sends the call to the agent that runs with the board.
func invokeOverMQTT(ctx context.Context, cmd *cobra.Command, path, tool string, params json.RawMessage, admin bool, timeout time.Duration) error {
	r, err := callOverMQTT(ctx, cmd, path, "call", mqtt.Command{Tool: tool, Params: params}, admin, timeout)
	if err != nil {
		return err
	}
	if !r.OK {
		return replyError(r.Error, r.Code, r.Paths)
	}
	return writeJSON(cmd.OutOrStdout(), r.Result)
}

// replyError is the agent's error reply as the CLI's error.
func replyError(msg, code string, paths []string) error {
	msg += " (" + code
	if len(paths) > 0 {
		msg += "; paths: " + strings.Join(paths, ", ")
	}
	return errors.New(msg + ")")
}

// callOverMQTT hands a command to the agent that runs with the board (and
// holds its store) and waits up to timeout for the reply.
func callOverMQTT(ctx context.Context, cmd *cobra.Command, path, what string, c mqtt.Command, admin bool, timeout time.Duration) (mqtt.Reply, error) {
	b, err := board.Load(path)
	if err != nil {
		return mqtt.Reply{}, err
	}
	cfg, err := mqttplane.Config(b)
	if err != nil {
		return mqtt.Reply{}, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "edgeagent: an agent is running with %s (its store is locked); sending the %s over MQTT to %s\n", path, what, cfg.BrokerURL())
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return mqtt.Call(ctx, cfg, c, admin)
}
