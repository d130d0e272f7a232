// Package cmd holds kubectl-ssa's cobra commands: flags, help text and the
// wiring from flags to the pkg/ libraries. It does no SSA logic itself.
package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// ExitError carries an exit code to main. Err, when set, is printed as
// "error: ...".
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// globalOptions are the flags every subcommand shares.
type globalOptions struct {
	configFlags *genericclioptions.ConfigFlags
	color       string
	streams     genericiooptions.IOStreams
	// quietWarnings drops the apiserver's deprecation warnings (a walk
	// over every kind would print one per deprecated kind).
	quietWarnings bool
}

func (g *globalOptions) palette() (*render.Palette, error) {
	mode := render.ColorMode(g.color)
	switch mode {
	case render.ColorAuto, render.ColorAlways, render.ColorNever:
	default:
		return nil, fmt.Errorf("--color must be auto, always or never, not %q", g.color)
	}
	return render.NewPalette(render.UseColor(mode, g.streams.Out)), nil
}

// NewRootCmd builds "kubectl ssa".
func NewRootCmd(streams genericiooptions.IOStreams) *cobra.Command {
	g := &globalOptions{
		configFlags: genericclioptions.NewConfigFlags(true),
		color:       string(render.ColorAuto),
		streams:     streams,
	}
	root := &cobra.Command{
		Use:   "ssa",
		Short: "See, explain and safely change Server-Side Apply field ownership",
		Long: `kubectl ssa makes Server-Side Apply visible, explainable and safe.

It reads metadata.managedFields and shows who owns each field (who-owns),
predicts and explains apply conflicts locally with the apiserver's own
field-manager code (explain-conflict), hands fields over between managers
without ever resetting them (handover), and moves objects from client-side
to server-side apply (migrate).`,
		Annotations: map[string]string{
			cobra.CommandDisplayNameAnnotation: "kubectl ssa",
		},
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(streams.In)
	root.SetOut(streams.Out)
	root.SetErr(streams.ErrOut)
	g.configFlags.AddFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&g.color, "color", g.color, "Colour the text output: auto (a terminal without NO_COLOR or TERM=dumb), always, never. JSON and YAML are never coloured.")

	root.AddCommand(
		newWhoOwnsCmd(g),
		newExplainConflictCmd(g),
		newHandoverCmd(g),
		newMigrateCmd(g),
		newVersionCmd(g),
	)
	addCompletion(root, g)
	return root
}
