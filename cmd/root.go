package cmd

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/rest"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/redact"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

// globalOptions are the flags every subcommand shares.
type globalOptions struct {
	configFlags *genericclioptions.ConfigFlags
	color       string
	streams     genericiooptions.IOStreams
	// quietWarnings drops the apiserver's deprecation warnings (a walk
	// over every kind would print one per deprecated kind).
	quietWarnings bool
	// commandFlags are the connection flags given, for the commands
	// errors suggest (clusterFlags).
	commandFlags []string
	profile      profileOptions
	// secrets is the run's Secret filter: the Secret values it read, which
	// main's output filter replaces (see internal/redact).
	secrets *redact.Set
	// oneDial makes the run's requests to a server wait for the first
	// one's connection (kube.NewOneDial).
	oneDial func(http.RoundTripper) http.RoundTripper
	// failed are the run's errors on some of its objects or clusters
	// (said on stderr as well), that a page says it lacks.
	failed []error
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

// cluster makes the clients, once per run.
func (g *globalOptions) cluster() (*kube.Cluster, error) {
	return kube.New(g.configFlags, kube.Options{QuietWarnings: g.quietWarnings, CommandFlags: g.commandFlags})
}

// cacheDir is kubectl's --cache-dir.
func (g *globalOptions) cacheDir() string {
	if g.configFlags.CacheDir != nil {
		return *g.configFlags.CacheDir
	}
	return ""
}

// wrapClients makes a client configuration remember the Secrets it
// reads, and share the run's first connection to its server.
func (g *globalOptions) wrapClients(c *rest.Config) *rest.Config {
	c.Wrap(g.secrets.Transport)
	c.Wrap(g.oneDial)
	return c
}

// Execute runs "kubectl ssa" with the arguments of the process; the
// Secret values it reads are added to secrets (the filter of main's
// output streams).
func Execute(ctx context.Context, streams genericiooptions.IOStreams, secrets *redact.Set) error {
	root, g := newRoot(streams)
	g.secrets = secrets
	err := withSuggestions(root.ExecuteContext(ctx))
	if perr := g.profile.stop(); err == nil && perr != nil {
		err = perr
	}
	return err
}

// SuggestionError is a mistyped command or argument with what the user
// may have meant, as data: main prints the error on its line and each
// suggestion on its own, every one escaped.
type SuggestionError struct {
	Msg string
	// Meant are the names cobra found close to the one typed.
	Meant []string
}

func (e *SuggestionError) Error() string { return e.Msg }

// Suggestions are the names the user may have meant.
func (e *SuggestionError) Suggestions() []string { return e.Meant }

// cobraSuggestions is how cobra appends its suggestions to an error
// (command.go, findSuggestions): one tab-indented name a line.
const cobraSuggestions = "\n\nDid you mean this?\n"

// withSuggestions takes cobra's suggestions out of an error's one line,
// where the escaping of the error line would print them as a literal
// "\n\nDid you mean this?\n\t".
func withSuggestions(err error) error {
	if err == nil {
		return nil
	}
	msg, list, ok := strings.Cut(err.Error(), cobraSuggestions)
	if !ok {
		return err
	}
	out := &SuggestionError{Msg: msg}
	for _, line := range strings.Split(list, "\n") {
		if name := strings.TrimSpace(line); name != "" {
			out.Meant = append(out.Meant, name)
		}
	}
	return out
}

// NewRootCmd builds "kubectl ssa".
func NewRootCmd(streams genericiooptions.IOStreams) *cobra.Command {
	root, _ := newRoot(streams)
	return root
}

func newRoot(streams genericiooptions.IOStreams) (*cobra.Command, *globalOptions) {
	g := &globalOptions{
		configFlags: genericclioptions.NewConfigFlags(true),
		color:       string(render.ColorAuto),
		streams:     streams,
		secrets:     &redact.Set{},
		oneDial:     kube.NewOneDial(),
	}
	root := &cobra.Command{
		Use:   "ssa",
		Short: "See, explain and safely change Server-Side Apply field ownership",
		Long: `kubectl ssa makes Server-Side Apply visible, explainable and safe.

It reads metadata.managedFields and shows who owns each field (who-owns),
predicts and explains apply conflicts locally with the apiserver's own
field-manager code (explain-conflict), hands fields over between managers
without ever resetting them (handover), moves objects from client-side
to server-side apply (migrate), finds field-ownership problems across kinds,
namespaces and clusters (audit), and reports managers fighting over fields
(watch).`,
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
	// Every answer about Secrets is read on its way in, so that main's
	// output filter knows their values (see internal/redact); requests
	// sent side by side share one connection (kube.NewOneDial).
	g.configFlags.WrapConfigFn = g.wrapClients
	// --show-secret-values, where a command has it, turns the filter off.
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		g.commandFlags = clusterFlags(c)
		// What reads objects without a client (files, Helm's release
		// manifests) adds their Secrets to the set its context carries.
		c.SetContext(redact.NewContext(c.Context(), g.secrets))
		// Inputs (files, URLs) share one bound per run, and a URL is
		// fetched within --request-timeout.
		timeout := ""
		if g.configFlags.Timeout != nil {
			timeout = *g.configFlags.Timeout
		}
		c.SetContext(kube.WithInputs(c.Context(), timeout))
		if f := c.Flags().Lookup("show-secret-values"); f != nil && f.Value.String() == "true" {
			g.secrets.Disable()
		}
		return g.profile.start()
	}
	g.profile.addFlags(root.PersistentFlags())
	root.PersistentFlags().StringVar(&g.color, "color", g.color, "Colour the text output: auto (a terminal without NO_COLOR or TERM=dumb), always, never. JSON and YAML are never coloured.")

	root.AddCommand(
		newWhoOwnsCmd(g),
		newExplainConflictCmd(g),
		newDiffCmd(g),
		newExtractCmd(g),

		newHandoverCmd(g),
		newMigrateCmd(g),
		newAuditCmd(g),
		newWatchCmd(g),
		newMonitorCmd(g),
		newSnapshotCmd(g),
		newVersionCmd(g),
	)
	addCompletion(root, g)
	return root, g
}
