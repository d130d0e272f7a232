package cmd

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/source"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/handover"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

type handoverOptions struct {
	*globalOptions
	sel             kube.Selection
	hpaSource       *source.Cluster
	fields          []string
	all             bool
	from            string
	fromSubresource string
	to              string
	mode            string
	tempManager     string
	wait            bool
	timeout         time.Duration
	dryRun          dryRunFlag
	output          outputFlag
	release         bool
	showSecrets     bool
	clusterFlags    []string

	// Set by complete.
	args []string
	dr   v1alpha1.DryRun
	pal  *render.Palette
	// printer prints the reports, as data or as narratives.
	printer printer[*v1alpha1.HandoverReport]
	// view is the narratives' options (the run sets the time).
	view render.Options
}

func (o *handoverOptions) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.sel.AddFlags(fs, kube.SelectionFlags{What: "to change"})
	fs.StringArrayVar(&o.fields, "field", nil, "A field to move, as who-owns prints it: .spec.replicas, '.metadata.labels[\"app.kubernetes.io/name\"]', '.spec.template.spec.containers[name=\"app\"].image' (repeatable).")
	fs.StringVar(&o.from, "from", "", "The manager that gives the fields up (as who-owns -o managers names it).")
	fs.StringVar(&o.fromSubresource, "from-subresource", "", "Only the entries of --from written through this subresource (scale, status; 'none' for the main resource).")
	o.dryRun.add(fs, `"none" writes; "client" prints the plan without sending anything; "server" sends every step as a server dry run.`)
	o.output.add(cmd, "text", "text")
	fs.BoolVar(&o.showSecrets, "show-secret-values", false, "Show the values of Secret data instead of redacting them.")
}

func newHandoverCmd(g *globalOptions) *cobra.Command {
	o := &handoverOptions{globalOptions: g, mode: "auto", tempManager: handover.DefaultTempManager, timeout: 2 * time.Minute}
	cmd := &cobra.Command{
		Use:   "handover (TYPE/NAME... | TYPE -l SELECTOR | -f FILE) --field PATH --from MANAGER --to MANAGER [flags]",
		Short: "Move field ownership between managers without ever resetting a value",
		Long: `Move the ownership of fields from one field manager to another, safely,
following the two recipes of the Server-Side Apply documentation.

To a controller (--to names a manager that writes the field itself through
Update or a subresource, like kube-controller-manager for an HPA's
.spec.replicas): a temporary manager (--temp-manager) first applies the
fields at their current values, so that taking them away from the old owner
can never reset them; then the old owner releases them; with --wait the
command waits until the controller writes the fields and then removes the
temporary manager. A controller writes only when the value must change (an
HPA whose target count is already there may never write): once no applier
owns the fields, no last-applied annotation holds them and an autoscaler
targets the object, the handover is done ("handed-over", exit 0), with or
without --wait; the temporary manager lets go when the command runs again
after the controller wrote them. --wait with --dry-run shows the plan and
does not wait.

Between two appliers (e.g. a CI pipeline's manager to argocd-controller):
the new manager takes shared ownership at the current values, then the old
manager releases them.

Only managedFields change (apart from the temporary manager's apply, which
sets the values the fields already have), and, when --from is a client-side
apply manager (kubectl-client-side-apply, or whichever Update manager owns
the kubectl.kubernetes.io/last-applied-configuration annotation), that
annotation: kubectl's next client-side apply deletes every field the
annotation holds and your manifest does not, whoever owns it, so the fields
handed over are taken out of it in the same write that takes them out of
its managedFields entry. If the annotation can't be edited exactly (not
JSON, another apiVersion), nothing is written and the error gives the
command that removes it first. Every write carries the object's
resourceVersion; if another writer changes the object in between, the
command reads it again and plans again. Running it again after it finished
does nothing; after an interruption it completes the remaining steps.

--mode auto picks "controller" when --to has an Update entry on the object
(or is kube-controller-manager), "applier" otherwise.

Secret values are redacted in the report and in messages unless
--show-secret-values is given.`,
		Example: `  # Hand .spec.replicas to the HorizontalPodAutoscaler, and wait for it
  kubectl ssa handover deployment/web --field .spec.replicas --from kubectl --to kube-controller-manager --wait

  # The Deployment was applied client-side (kubectl apply without --server-side), then autoscaled
  kubectl ssa handover deployment/web --field .spec.replicas --from kubectl-client-side-apply --to kube-controller-manager --wait

  # See the plan first
  kubectl ssa handover deployment/web --field .spec.replicas --from kubectl --to kube-controller-manager --dry-run=client

  # Move an image from a CI pipeline's manager to Argo CD, for every Deployment labelled team=pay
  kubectl ssa handover deployments -l team=pay --field '.spec.template.spec.containers[name="app"].image' --from ci-deploy --to argocd-controller

  # Before applying a manifest without a label, make a leftover client-side apply entry let go of it
  kubectl ssa handover release deployment/web --from kubectl-client-side-apply --field '.metadata.labels.tier'`,
		RunE: runE(o),
	}
	o.addFlags(cmd)
	cmd.Flags().StringVar(&o.to, "to", "", "The manager that takes the fields.")
	cmd.Flags().StringVar(&o.mode, "mode", o.mode, "auto, controller (--to writes the fields itself) or applier (--to applies manifests).")
	cmd.Flags().StringVar(&o.tempManager, "temp-manager", o.tempManager, "The temporary manager that holds the fields during a handover to a controller.")
	cmd.Flags().BoolVar(&o.wait, "wait", false, "Handover to a controller: wait until it writes the fields, then remove the temporary manager.")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "How long --wait waits.")
	cmd.ValidArgsFunction = completeResources(g)
	_ = cmd.RegisterFlagCompletionFunc("from", completeManagers(g, &o.sel))
	_ = cmd.RegisterFlagCompletionFunc("to", completeManagers(g, &o.sel))
	_ = cmd.RegisterFlagCompletionFunc("field", completeFields(g, &o.sel))

	cmd.AddCommand(newHandoverReleaseCmd(g))
	return cmd
}

// newHandoverReleaseCmd builds "handover release": the handover's flags,
// without --to, and --all.
func newHandoverReleaseCmd(g *globalOptions) *cobra.Command {
	rel := &handoverOptions{globalOptions: g, release: true}
	release := &cobra.Command{
		Use:   "release (TYPE/NAME... | TYPE -l SELECTOR | -f FILE) --from MANAGER (--field PATH... | --all) [flags]",
		Short: "Make a manager give up fields, without changing any value",
		Long: `Take fields out of a manager's managedFields entry, changing no value.

Use it to clear what a manager no longer means to own, typically a leftover
kubectl-client-side-apply or before-first-apply entry that keeps a field you
removed from your manifest from being removed. The report says which fields
are then owned by nobody (they stay as they are) and which are owned only by
appliers (their next apply without the field removes it).

A client-side apply manager also lets go of the fields in its
kubectl.kubernetes.io/last-applied-configuration annotation (in the same
write), so that its next apply does not delete them; with --all, or when the
annotation itself is released, the annotation is removed.`,
		Example: `  # explain-conflict says your apply won't remove a label because client-side apply
  # still owns it: release it first, then apply
  kubectl ssa handover release deployment/web --from kubectl-client-side-apply --field .metadata.labels.tier

  # Drop everything a stale manager owns
  kubectl ssa handover release configmap/settings --from before-first-apply --all`,
		RunE: runE(rel),
	}
	rel.addFlags(release)
	release.Flags().Lookup("field").Usage = "A field to release, as who-owns prints it (repeatable)."
	release.Flags().BoolVar(&rel.all, "all", false, "Release every field of --from.")
	release.ValidArgsFunction = completeResources(g)
	_ = release.RegisterFlagCompletionFunc("from", completeManagers(g, &rel.sel))
	_ = release.RegisterFlagCompletionFunc("field", completeFields(g, &rel.sel))
	return release
}

// complete reads each flag into its typed value: the dry run and the
// output (the one printer, with its palette).
func (o *handoverOptions) complete(cmd *cobra.Command, args []string) (err error) {
	o.args = args
	o.clusterFlags = clusterFlags(cmd)
	if o.dr, err = o.dryRun.parse(); err != nil {
		return err
	}
	if err := o.output.parse(); err != nil {
		return err
	}
	if o.pal, err = o.palette(); err != nil {
		return err
	}
	o.choosePrinter()
	return nil
}

// validate checks the flags together.
func (o *handoverOptions) validate() error {
	if err := o.validateFields(); err != nil {
		return err
	}
	if o.from == "" {
		return errors.New("name the manager that gives the fields up with --from")
	}
	if o.release {
		if len(o.fields) == 0 && !o.all {
			return errors.New("name the fields with --field, or release all of them with --all")
		}
		if len(o.fields) > 0 && o.all {
			return errors.New("give --field or --all, not both")
		}
	} else {
		if o.to == "" {
			return errors.New("name the manager that takes the fields with --to")
		}
		if err := ownership.ValidateManager(o.to); err != nil {
			return fmt.Errorf("--to: %w", err)
		}
		if err := ownership.ValidateManager(o.tempManager); err != nil {
			return fmt.Errorf("--temp-manager: %w", err)
		}
		if len(o.fields) == 0 {
			return errors.New("name the fields to hand over with --field")
		}
		if o.to == o.from && o.fromSubresource == "" {
			return errors.New("--from and --to are the same manager")
		}
		switch v1alpha1.HandoverMode(o.mode) {
		case v1alpha1.HandoverAuto, v1alpha1.HandoverController, v1alpha1.HandoverApplier:
		default:
			return fmt.Errorf("--mode must be auto, controller or applier, not %q", o.mode)
		}
		if o.timeout <= 0 {
			return fmt.Errorf("--timeout must be a positive duration, e.g. 2m, not %s", o.timeout)
		}
	}
	return o.sel.Validate(o.args)
}

// validateFields reads each --field's syntax before any object is read
// (the run reads it again against each object), and refuses a path that
// names the whole object: an empty shell variable ("--field $F") must not
// hand over or release every field the manager owns. All of them is
// --all's to ask for, on handover release.
func (o *handoverOptions) validateFields() error {
	all := "name a field, e.g. .spec.replicas"
	if o.release {
		all = "name a field, e.g. .spec.replicas, or release every field of --from with --all"
	} else if o.from != "" {
		all = "name a field, e.g. .spec.replicas (to make --from let go of every field, use kubectl ssa handover release --from " + o.from + " --all)"
	}
	for _, f := range o.fields {
		if strings.TrimSpace(f) == "" {
			return fmt.Errorf("--field %q is empty (an unset shell variable?): %s", f, all)
		}
		p, err := pathlang.ParsePath(f)
		if err != nil {
			return fmt.Errorf("--field %s: %w", f, err)
		}
		if len(p) == 0 {
			return fmt.Errorf("--field %q names the whole object, not a field: %s", f, all)
		}
	}
	return nil
}
