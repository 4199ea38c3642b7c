package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/edgeagent/edgeagent/node/toolcheck"
)

func init() {
	var print bool
	cmd := &cobra.Command{
		Use:   "check FILE",
		Short: "Validate a board config (and build its sensors and plugins without touching hardware)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			n, _, err := loadNode(args[0], true)
			if err != nil {
				return err
			}
			defer n.Close()
			if err := toolcheck.Check(n); err != nil {
				return err
			}
			if print {
				out, err := n.Board.Marshal()
				if err != nil {
					return err
				}
				_, err = cmd.OutOrStdout().Write(out)
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: ok (%s, %d sensors, %d actuators, %d tools)\n",
				args[0], n.Board.Device.Platform, len(n.Board.Sensors), len(n.Board.Actuators), len(n.Tools.List()))
			return nil
		},
	}
	cmd.Flags().BoolVar(&print, "print", false, "print the effective config with defaults filled in")
	rootCmd.AddCommand(cmd)
}
