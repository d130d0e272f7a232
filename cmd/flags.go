package cmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/write"
)

// outputFlag is -o: one of a command's text views, or json, yaml,
// jsonpath=... or go-template=... over its report; or, for a command
// that streams (watch), one of its views or json (a JSON object a line).
type outputFlag struct {
	raw   string
	views []string
	out   render.Output
	// stream: the command writes as it goes, so there is no whole
	// report for YAML or a template.
	stream bool
}

func (f *outputFlag) add(cmd *cobra.Command, def string, views ...string) {
	f.raw, f.views = def, views
	cmd.Flags().StringVarP(&f.raw, "output", "o", def, "Output: "+strings.Join(append(append([]string{}, views...), render.DataFormats...), "|")+".")
	completions := append(append([]string{}, views...), render.FormatJSON, render.FormatYAML, render.FormatJSONPath+"=", render.FormatGoTemplate+"=")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(completions, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
}

// addStream adds -o to a command that streams: its views, or json lines.
func (f *outputFlag) addStream(cmd *cobra.Command, def, usage string, views ...string) {
	f.raw, f.views, f.stream = def, views, true
	cmd.Flags().StringVarP(&f.raw, "output", "o", def, usage)
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(append(append([]string{}, views...), render.FormatJSON), cobra.ShellCompDirectiveNoFileComp))
}

// parse checks the value and keeps it in out.
func (f *outputFlag) parse() error {
	if f.stream {
		if f.raw != render.FormatJSON && !slices.Contains(f.views, f.raw) {
			return fmt.Errorf("--output must be %s or json (JSON lines), not %q", strings.Join(f.views, ", "), f.raw)
		}
		f.out = render.Output{Name: f.raw}
		return nil
	}
	var err error
	f.out, err = render.ParseOutput(f.raw, f.views)
	return err
}

// isData: -o prints the report as data for a program (json, yaml,
// jsonpath, go-template), so nothing is said beside it for a person (a
// progress line, a note, a dry run's notice). How the report itself is
// printed is the printer's, chosen once (choosePrinter).
func (f *outputFlag) isData() bool { return f.out.IsData() }

// timeFlag is --time: raw as given, mode once parse has checked it.
type timeFlag struct {
	raw  string
	mode render.TimeMode
}

func (f *timeFlag) add(cmd *cobra.Command, usage string) {
	f.raw = string(render.TimeRelative)
	cmd.Flags().StringVar(&f.raw, "time", f.raw, usage)
	_ = cmd.RegisterFlagCompletionFunc("time", cobra.FixedCompletions([]string{string(render.TimeRelative), string(render.TimeAbsolute), string(render.TimeNone)}, cobra.ShellCompDirectiveNoFileComp))
}

func (f *timeFlag) parse() error {
	switch m := render.TimeMode(f.raw); m {
	case render.TimeRelative, render.TimeAbsolute, render.TimeNone:
		f.mode = m
		return nil
	}
	return fmt.Errorf("--time must be relative, absolute or none, not %q", f.raw)
}

// dryRunFlag is --dry-run, as kubectl's: a bare --dry-run means client.
type dryRunFlag struct{ raw string }

func (f *dryRunFlag) add(fs *pflag.FlagSet, usage string) {
	f.raw = string(v1alpha1.DryRunNone)
	fs.StringVar(&f.raw, "dry-run", f.raw, usage)
	fs.Lookup("dry-run").NoOptDefVal = string(v1alpha1.DryRunClient)
}

func (f *dryRunFlag) parse() (v1alpha1.DryRun, error) { return write.ParseDryRun(f.raw) }

// connectionFlags are kubectl's flags that choose the cluster and the
// user: suggested commands repeat those the user gave (not --token:
// a pasteable command must not carry a credential).
var connectionFlags = []string{"kubeconfig", "context", "cluster", "user", "as", "as-group", "as-uid", "server", "certificate-authority", "client-certificate", "client-key", "insecure-skip-tls-verify", "tls-server-name", "request-timeout"}

// clusterFlags returns the connection flags given on the command line, as
// words (--context=prod), in a fixed order.
func clusterFlags(cmd *cobra.Command) []string {
	var out []string
	for _, name := range connectionFlags {
		f := cmd.Flags().Lookup(name)
		if f == nil || !f.Changed {
			continue
		}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+name+"="+v)
			}
			continue
		}
		out = append(out, "--"+name+"="+f.Value.String())
	}
	return out
}

// manifestArgs refuses positional arguments to a command that reads
// manifests (explain-conflict, diff), saying what to type instead:
// "deploy/web" names a live object, which these commands compare a
// manifest with.
func manifestArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	name := cmd.Name()
	return fmt.Errorf("%s reads the manifest you would apply, not a live object: give it with -f FILE (or -k DIR), e.g. kubectl ssa %s -f %s.yaml; to see the live %s's owners, run kubectl ssa who-owns %s",
		name, name, manifestHint(args[0]), args[0], args[0])
}

// manifestHint makes a file name from what the user typed (deploy/web: web).
func manifestHint(arg string) string {
	if i := strings.LastIndex(arg, "/"); i >= 0 && i < len(arg)-1 {
		arg = arg[i+1:]
	}
	if arg == "" || strings.ContainsAny(arg, " \t'\"$`\\") {
		return "manifest"
	}
	return arg
}
