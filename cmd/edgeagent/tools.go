package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(specs)
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
	invoke := &cobra.Command{
		Use:   "invoke TOOL [PARAMS_JSON]",
		Short: "Run one tool against the board (sensors running) and print the result",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			params := json.RawMessage(`{}`)
			if len(args) == 2 {
				params = json.RawMessage(args[1])
			}
			n, _, err := loadNode(invokeBoard, false)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			runCtx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() { done <- n.Run(runCtx, processStart) }()
			select {
			case <-n.Ready():
			case err := <-done:
				cancel()
				return err
			}
			res, ierr := n.Tools.Invoke(ctx, tools.Call{Caller: "cli", Tool: args[0], Params: params})
			cancel()
			if err := <-done; err != nil && ierr == nil {
				ierr = err
			}
			if ierr != nil {
				if te, ok := ierr.(*tools.Error); ok && len(te.Paths) > 0 {
					return fmt.Errorf("%w (paths: %s)", ierr, strings.Join(te.Paths, ", "))
				}
				return ierr
			}
			enc := json.NewEncoder(cmd.OutOrStdout())
			enc.SetIndent("", "  ")
			return enc.Encode(res)
		},
	}
	invoke.Flags().StringVar(&invokeBoard, "board", defaultBoard, "board config file")
	rootCmd.AddCommand(invoke)
}
