package cmd

import (
	"context"

	"github.com/spf13/cobra"
)

// runner is the shape of a command, as kubectl's: complete reads each flag
// once into its typed value (the one printer and palette included),
// validate checks the flags together, run makes the clients and does the
// work. Validation errors come before any cluster is contacted (a missing
// kubeconfig is not the first thing to fix in a mistyped command).
type runner interface {
	complete(cmd *cobra.Command, args []string) error
	validate() error
	run(ctx context.Context) error
}

// runE is cobra's RunE for a runner.
func runE(o runner) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := o.complete(cmd, args); err != nil {
			return err
		}
		if err := o.validate(); err != nil {
			return err
		}
		return o.run(cmd.Context())
	}
}
