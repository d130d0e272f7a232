package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/fight"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

const viewText = "text"

type watchOptions struct {
	*globalOptions
	output        outputFlag
	labelSelector string
	allNamespaces bool
	minFlips      int
	window        time.Duration
	timeout       time.Duration
	maxOutage     time.Duration

	// Set by complete.
	typ, name string
	pal       *render.Palette
}

func newWatchCmd(g *globalOptions) *cobra.Command {
	o := &watchOptions{globalOptions: g, minFlips: fight.DefaultMinFlips, window: fight.DefaultWindow, maxOutage: kube.DefaultMaxOutage}
	cmd := &cobra.Command{
		Use:   "watch (TYPE[/NAME] | TYPE NAME) [-l SELECTOR] [-n NAMESPACE | -A] [flags]",
		Short: "Watch objects and report managers fighting over fields",
		Long: `Watch objects and report ownership fights: two or more managers taking a
field from each other, each writing its own value, again and again (an
autoscaler and a GitOps tool on replicas, two controllers on one
annotation, a self-healing sync against a mutating webhook).

Every version of the objects is read whole, with managedFields. A flip is
a write that changes both the owner of a path and its value; a fight is a
path that flips at least --min-flips times within --window, with ownership
coming back to a manager that had lost it. Not fights: a single handover
(or a chain of them), a controller's steady writes (status, annotations it
alone owns), a rollout (the applier changing values it owns).

Each fight is printed when it is found and again at every further flip:
the managers (with operation and subresource), the path, the value each
writes and the rate. -o json writes one JSON object per line:
{"kind": "Fight", "object": ..., "path": ..., "managers": [...], "values":
[...], "flips": N, "since": ..., "perMinute": ...}.

The watch resumes after the server closes it and lists again when its
resourceVersion expired. When the server cannot be reached (it restarts,
the network drops) the watch tries again, pausing longer each time up to
5s, says on standard error when it lost the server and how long it was
blind once it is back, and fails (exit 2) when the server stays away
longer than --max-outage. Changes made while it was blind are seen as
one: a fight in that time can be missed.

Exit status (with --timeout, or after Ctrl-C): 0 no fight was seen, 1 a
fight was seen, 2 an error, or no fight seen by a watch that ended
without its server (it could not see the fights of that time).`,
		Example: `  # Who keeps changing the replicas of a Deployment?
  kubectl ssa watch deployment/web

  # Every Deployment of the cluster, as JSON lines, for an alert
  kubectl ssa watch deployments -A -o json

  # CI: fail if anything fights over the shop namespace's ConfigMaps for a minute
  kubectl ssa watch configmaps -n shop --timeout 1m

  # Be more sensitive: two flips within ten minutes
  kubectl ssa watch deploy -l app=web --min-flips 2 --window 10m`,
		ValidArgsFunction: completeResources(g),
		RunE:              runE(o),
	}
	f := cmd.Flags()
	// Watch takes one kind, so not -f/-k: kubectl get --watch's flags.
	f.StringVarP(&o.labelSelector, "selector", "l", "", "Label selector, as kubectl's (-l app=web,tier!=db).")
	f.BoolVarP(&o.allNamespaces, "all-namespaces", "A", false, "Watch objects in all namespaces.")
	f.IntVar(&o.minFlips, "min-flips", o.minFlips, "How many flips of a path within --window make a fight (at least 2).")
	f.DurationVar(&o.window, "window", o.window, "How far back flips count.")
	f.DurationVar(&o.timeout, "timeout", 0, "Stop after this long, then exit 1 if a fight was seen, 0 if not (default: until interrupted).")
	f.DurationVar(&o.maxOutage, "max-outage", o.maxOutage, "How long the watch goes on without its server (a restart, a network blip), trying again, before it fails with exit 2.")
	// A watch writes lines as they come, so none of the report formats
	// (YAML, templates) over a whole report.
	o.output.addStream(cmd, viewText, "Output: text (a line per fight) or json (a JSON object per line).", viewText)
	return cmd
}

// complete reads each flag into its typed value, the output (the one
// printer, with its palette) and what to watch from the arguments.
func (o *watchOptions) complete(_ *cobra.Command, args []string) (err error) {
	if err := o.output.parse(); err != nil {
		return err
	}
	if o.typ, o.name, err = watchTarget(args); err != nil {
		return err
	}
	o.pal, err = o.palette()
	return err
}

// watchTarget reads TYPE, TYPE/NAME or TYPE NAME.
func watchTarget(args []string) (typ, name string, err error) {
	switch {
	case len(args) == 0:
		return "", "", errors.New("name what to watch: TYPE, TYPE/NAME or TYPE NAME (see --help)")
	case len(args) == 1:
		typ, name, _ = strings.Cut(args[0], "/")
	case len(args) == 2 && !strings.Contains(args[0], "/"):
		typ, name = args[0], args[1]
	default:
		return "", "", errors.New("watch takes one kind: TYPE, TYPE/NAME or TYPE NAME")
	}
	if strings.Contains(typ, ",") {
		return "", "", errors.New("watch takes one kind: run one watch per kind")
	}
	return typ, name, nil
}

// validate checks the flags together.
func (o *watchOptions) validate() error {
	if o.minFlips < 2 {
		return fmt.Errorf("--min-flips must be at least 2, not %d: one flip is a handover", o.minFlips)
	}
	if o.window <= 0 {
		return errors.New("--window must be a positive duration, e.g. 5m")
	}
	if o.timeout < 0 {
		return errors.New("--timeout must be a positive duration, e.g. 30s")
	}
	if o.maxOutage <= 0 {
		return fmt.Errorf("--max-outage must be a positive duration, e.g. 2m, not %s", o.maxOutage)
	}
	if o.name != "" && o.labelSelector != "" {
		return errors.New("name cannot be provided when a selector is specified: give TYPE -l SELECTOR or TYPE/NAME, not both")
	}
	if o.name != "" && o.allNamespaces {
		return errors.New("a resource cannot be retrieved by name across all namespaces: drop -A or the name")
	}
	return nil
}

func (o *watchOptions) run(ctx context.Context) error {
	typ, name, pal := o.typ, o.name, o.pal
	c, err := o.cluster()
	if err != nil {
		return err
	}
	if err := c.CheckServer(); err != nil {
		return err
	}
	m, err := c.MappingFor(typ)
	if err != nil {
		return err
	}
	gr := m.Resource.GroupResource()
	wo := kube.WatchOptions{Resource: kube.ResourceOf(m), Namespace: c.Namespace, Name: name, LabelSelector: o.labelSelector,
		MaxOutage: o.maxOutage, OnOutage: func(out kube.Outage) {
			if out.Back {
				render.Warning(o.streams.ErrOut, fmt.Sprintf("the watch of %s has its server again after %s blind: changes made meanwhile are seen as one, and a fight in that time can be missed", gr, out.Blind.Round(100*time.Millisecond)))
				return
			}
			render.Warning(o.streams.ErrOut, fmt.Sprintf("the watch of %s lost its server (%v): trying again for up to %s (--max-outage)", gr, out.Err, o.maxOutage))
		}}
	if o.allNamespaces {
		wo.Namespace = ""
	}
	if err := c.CheckWatchTarget(ctx, wo); err != nil {
		return err
	}
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	fmt.Fprintln(o.streams.ErrOut, render.Escape(watchStartLine(wo, o.minFlips, o.window, o.timeout)))
	stream := func(ctx context.Context, fn func(*unstructured.Unstructured, bool)) error {
		return c.Watch(ctx, wo, fn)
	}
	emit := func(f v1alpha1.Fight) error { return render.FightLine(o.streams.Out, f, pal) }
	if o.output.out.Name == render.FormatJSON {
		emit = func(f v1alpha1.Fight) error { return render.FightJSON(o.streams.Out, f) }
	}
	res, err := fight.Watch(ctx, stream, fight.Options{MinFlips: o.minFlips, Window: o.window}, time.Now, emit,
		func(err error) { render.Error(o.streams.ErrOut, err) })
	var blind *kube.OutageError
	if errors.As(err, &blind) && res.Seen {
		// The fights seen stand; those of the blind time are unknown.
		render.Warning(o.streams.ErrOut, err.Error())
		return exit(CodeFound)
	}
	if err != nil {
		return err
	}
	return exitWith(watchCode(res))
}

// watchStartLine says what the watch watches, and that it is silent until
// a fight starts.
func watchStartLine(wo kube.WatchOptions, minFlips int, window, timeout time.Duration) string {
	what := wo.Resource.GVR.GroupResource().String()
	if wo.Name != "" {
		what += "/" + wo.Name
	}
	if wo.LabelSelector != "" {
		what += " (" + wo.LabelSelector + ")"
	}
	if wo.Namespace != "" {
		what += " in namespace " + wo.Namespace
	} else if wo.Resource.Namespaced {
		what += " in all namespaces"
	}
	until := "until interrupted (Ctrl-C)"
	if timeout > 0 {
		until = "for " + timeout.String()
	}
	return fmt.Sprintf("Watching %s %s for fights (%d flips within %s); a line is printed when one starts.", what, until, minFlips, window)
}

// watchTargetExists refuses to watch, silently, an object or a namespace
// that does not exist: a watch with a timeout would end "no fight".
