package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
)

func newDiffCmd(g *globalOptions) *cobra.Command {
	o := &explainOptions{globalOptions: g, fieldManager: "kubectl"}
	cmd := &cobra.Command{
		Use:   "diff -f MANIFEST [flags]",
		Short: "Show what a server-side apply would change, line by line, with owners",
		Long: `Show what "kubectl apply --server-side" of the manifests would change in
each object: a unified diff from the live object to the object as the
server would store it after the apply (defaults included), each changed
line annotated with its owners before and after.

The apply is computed here, as explain-conflict computes it, with the
apiserver's own field-manager code and the cluster's schema: only read
access is needed, no patch permission, and no admission webhook runs.

Every change is classified: modified, added, removed, reset (the server
sets the field back to its default) or ownership (the value stays, its
owners change: shared, taken by force, released). When the apply
conflicts, the diff is that of the forced apply, the conflicting lines are
marked "!", and the header says that the apply itself fails without
--force-conflicts. "Stays" lists the fields the object has that the
manifest does not set, by the manager that keeps them, with the command
that lets the applier own them (its next apply then removes them).

KUBECTL_EXTERNAL_DIFF is honoured as kubectl diff honours it: the live and
the resulting objects are written to two directories and the program runs
on them (without owners).

-o json|yaml prints a DiffReport per object, with the live object and the
result, so that scripts can diff them.

Exit status, as kubectl diff: 0 no value changes (a change of owners alone
is shown but exits 0, as kubectl diff sees none), 1 changes (a conflict
counts: the apply would fail, as does a denial by a modelled admission
plugin or an evaluated admission policy), 2 an error (also a namespace that
does not exist, where the apply would fail), 4 no value changes predicted
but admission that is not evaluated here (a matching webhook, a policy
that can't be evaluated here) may change or refuse the apply, 5 the apply
succeeds but resets a field a controller sets (.spec.replicas of an object
a HorizontalPodAutoscaler scales): explain-conflict gives the ways out.

--helm-release NAME diffs a Helm release's last deployed revision (or
--helm-revision N) against the cluster, without the helm binary: what the
cluster has drifted from, as Helm would apply it (field manager helm,
Helm 4's; with the label and annotations Helm adds; objects without a
namespace in the release's). The release is read from its Secrets
(sh.helm.release.v1.NAME.vN; ConfigMaps with HELM_DRIVER=configmap), which
needs permission to list Secrets in the namespace; hooks are not part of
it. A revision applied client-side (Helm 3) is compared as Helm 4 would
switch it to server-side apply (--csa-upgrade helm).

--subresource scale takes the object's own manifest (its kind, name and
.spec.replicas) and predicts the apply of a Scale with those replicas to
/scale, which is what a client sends there.`,
		Example: `  # What would this apply change, and whose fields?
  kubectl ssa diff -f deploy.yaml

  # As Argo CD would apply it
  kubectl ssa diff -k overlays/prod --field-manager argocd-controller

  # What the cluster has drifted from since Helm deployed release "web"
  kubectl ssa diff --helm-release web -n shop

  # Gate CI on "no change"
  kubectl ssa diff -f manifests/ -R --field-manager ci-deploy >/dev/null && echo "in sync"

  # With your own diff program
  KUBECTL_EXTERNAL_DIFF="colordiff -N -u" kubectl ssa diff -f deploy.yaml

  # Offline, against a saved object
  kubectl get deploy web -o yaml --show-managed-fields > live.yaml
  kubectl ssa diff --local --live-file live.yaml -f deploy.yaml`,
		Args: manifestArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.helm.bind(cmd, o)
			if err := o.validate(); err != nil {
				return err
			}
			o.clusterFlags = clusterFlags(cmd)
			return runDiff(cmd.Context(), o)
		},
	}
	o.addApplyFlags(cmd, "diff", "Diff a forced apply (the diff is that of the forced apply either way; this says the apply is meant to force).")
	return cmd
}

func runDiff(ctx context.Context, o *explainOptions) error {
	p, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	pal, manifests, src, opts := p.pal, p.manifests, p.src, p.opts
	var reports []*v1alpha1.DiffReport
	var computed []*diff.Computed
	var targets []remedy.Target
	var failed []error
	for i, m := range manifests {
		d, rc, err := diffOne(ctx, src, m, opts, o)
		if stop := stopped(ctx, "diff stopped at %s, object %d of %d: nothing is reported (it only reads: run it again)", kube.ObjectName(m.Object), i+1, len(manifests)); stop != nil {
			return stop
		}
		if err != nil || d.Report.Message != "" {
			noteApplied(src, m.Object, nil)
		}
		if err != nil {
			failed = append(failed, err)
			continue
		}
		if d.Report.Message == "" {
			noteApplied(src, m.Object, &unstructured.Unstructured{Object: d.Report.Result})
		}
		reports = append(reports, d.Report)
		computed = append(computed, d)
		targets = append(targets, rc)
	}

	external := strings.TrimSpace(os.Getenv("KUBECTL_EXTERNAL_DIFF"))
	var externalErr error
	switch {
	case len(reports) == 0:
	case o.output.out.IsData():
		items := make([]any, len(reports))
		for i, r := range reports {
			items[i] = r
		}
		if err := o.output.out.Print(o.streams.Out, items, len(manifests) > 1); err != nil {
			return err
		}
	case external != "":
		externalErr = runExternalDiff(external, reports, o)
	default:
		tm := o.time.mode
		ropts := render.Options{Time: tm, Now: time.Now(), Palette: pal}
		o.printHelmHeader(o.streams.Out)
		for i, d := range computed {
			if i > 0 {
				fmt.Fprintln(o.streams.Out)
			}
			if err := render.Diff(o.streams.Out, d.Report, d.Live, d.Result, ropts); err != nil {
				return err
			}
		}
	}
	if len(failed) > 0 {
		for _, e := range failed[:len(failed)-1] {
			render.Error(o.streams.ErrOut, e)
		}
		return failed[len(failed)-1]
	}
	if external != "" && len(reports) > 0 && !o.output.out.IsData() {
		return externalErr // the diff program's answer, as with kubectl diff
	}
	if err := diffFound(o, reports); err != nil {
		return err
	}
	var names []string
	var check remedy.Command
	for i, r := range reports {
		switch {
		case r.Admission != nil && !r.Admission.Exact:
			names = append(names, notExact(r.Object, r.Admission))
		case len(r.Unchecked) > 0:
			names = append(names, ownership.ObjectName(r.Object.Kind, r.Object.Namespace, r.Object.Name)+" ("+r.Unchecked[0]+")")
		default:
			continue
		}
		if check == nil {
			t := targets[i]
			check = t.Line([]string{"kubectl", "ssa", "explain-conflict"}, append(append(t.SSAInput(), t.ManagerFlag()...), "--verify")...)
		}
	}
	if len(names) > 0 {
		return &ExitError{Code: CodeNotVerified, Err: fmt.Errorf("no change predicted for %s, but admission or validation may change or refuse the apply: check with %s", strings.Join(names, ", "), check)}
	}
	return nil
}

// diffFound is exit 1 for what the diff found (the upgrade's deletes and
// refusals, said in the header; value changes, denials), or 5 for a
// controlled reset; nil when nothing.
func diffFound(o *explainOptions, reports []*v1alpha1.DiffReport) error {
	if len(o.helm.deletes) > 0 || len(o.helm.refusals) > 0 {
		return exit(CodeFound)
	}
	if err := diffControlledResets(reports); err != nil {
		return err
	}
	for _, r := range reports {
		if r.HasChanges() || r.Admission != nil && r.Admission.Denied != "" {
			return exit(CodeFound)
		}
	}
	return nil
}

// diffControlledResets is exit 5 when an apply that succeeds resets a field
// a controller sets (a conflict or a denial is exit 1: nothing is written).
func diffControlledResets(reports []*v1alpha1.DiffReport) error {
	var as []*v1alpha1.ConflictReport
	for _, r := range reports {
		if len(r.Conflicts) > 0 || r.Admission != nil && r.Admission.Denied != "" {
			return nil
		}
		as = append(as, &v1alpha1.ConflictReport{ApplyMeta: r.ApplyMeta, ControlledResets: r.ControlledResets, HelmUpgrade: r.HelmUpgrade})
	}
	return controlledResets(as)
}

// diffOne predicts the apply of one manifest (and, when it conflicts, the
// forced apply) and compares.
func diffOne(ctx context.Context, src conflict.Source, m kube.Manifest, opts conflict.Options, o *explainOptions) (*diff.Computed, remedy.Target, error) {
	opts.AlsoForced = true
	asked, err := o.explainOne(ctx, src, m, opts)
	if err != nil {
		return nil, remedy.Target{}, err
	}
	rc := o.target(m.Source, &asked.ConflictReport)
	d, err := diff.Compute(asked, diff.Options{Target: rc, ShowSecretValues: o.showSecrets})
	if err != nil {
		return nil, rc, err
	}
	return d, rc, nil
}
