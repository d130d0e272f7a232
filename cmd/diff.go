package cmd

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/diff"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/render/review"
)

// diffOptions are diff's: the apply to predict, the same as
// explain-conflict's.
type diffOptions struct {
	applyInput
	// printer prints the diffs (validate chooses it).
	printer printer[*diff.Computed]
}

func newDiffCmd(g *globalOptions) *cobra.Command {
	o := &diffOptions{applyInput: newApplyInput(g)}
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
result, so that scripts can diff them. -o html writes one self-contained
page of every object's diff, each line with its owners before and after
(KUBECTL_EXTERNAL_DIFF is not run for it).

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
		RunE: runE(o),
	}
	o.addFlags(cmd, "diff", "Diff a forced apply (the diff is that of the forced apply either way; this says the apply is meant to force).",
		"The tool whose settings the fixes are written in (argocd, flux or helm), repeated in the explain-conflict command the diff points to.")
	return cmd
}

// complete takes what the flags given imply (applyInput's complete).
func (o *diffOptions) complete(cmd *cobra.Command, _ []string) error {
	o.applyInput.complete(cmd)
	return nil
}

// validate checks the flags of the apply to diff, and chooses the
// printer of -o.
func (o *diffOptions) validate() error {
	if err := o.applyInput.validate("diff", false); err != nil {
		return err
	}
	o.choosePrinter()
	return nil
}

func (o *diffOptions) run(ctx context.Context) error {
	p, err := o.prepare(ctx)
	if err != nil {
		return err
	}
	opts := p.opts
	var computed []*diff.Computed
	var targets []remedy.Target
	failed, err := p.eachApply(ctx, "diff", func(m kube.Manifest) (*unstructured.Unstructured, func(), error) {
		d, rc, err := o.diffOne(ctx, p.src, m, opts)
		if err != nil {
			return nil, nil, err
		}
		var result *unstructured.Unstructured
		if d.Report.Message == "" {
			result = &unstructured.Unstructured{Object: d.Report.Result}
		}
		return result, func() {
			computed = append(computed, d)
			targets = append(targets, rc)
		}, nil
	})
	if err != nil {
		return err
	}
	reports := make([]*v1alpha1.DiffReport, len(computed))
	for i, d := range computed {
		reports[i] = d.Report
	}
	o.view = render.Options{Time: o.time.mode, Now: time.Now(), Palette: p.pal}
	o.failed = failed
	if err := printAll(o.printer, computed, len(p.manifests) > 1); err != nil {
		return err
	}
	var answer error
	external, ran := o.printer.(*externalDiffPrinter)
	if ran {
		answer = external.answer
	}
	helmFound := len(o.helm.deletes) > 0 || len(o.helm.refusals) > 0
	return diffExit(o.streams.ErrOut, failed, reports, targets, helmFound, ran && len(reports) > 0, answer)
}

// choosePrinter chooses the printer of -o, once: the reports as data,
// the diffs through KUBECTL_EXTERNAL_DIFF, or as annotated diffs (after
// the Helm release's header), with the palette run's prepare makes
// (o.view).
func (o *diffOptions) choosePrinter() {
	if external := strings.TrimSpace(os.Getenv("KUBECTL_EXTERNAL_DIFF")); external != "" && !o.output.isData() && o.output.out.Name != viewHTML {
		o.printer = &externalDiffPrinter{spec: external, o: o}
		return
	}
	o.printer = choosePrinter(o.streams.Out, o.output.out, func(d *diff.Computed) any { return d.Report }, textView[*diff.Computed]{
		header: func(w io.Writer) { o.snapshot.printHeader(w); o.printHelmHeader(w, true) },
		one: func(w io.Writer, d *diff.Computed) error {
			return render.Diff(w, d.Report, d.Live, d.Result, o.view)
		},
		documents: reviewDocuments(func(ds []*diff.Computed) *review.Document { return o.reviewOf("diff", diffObjects(ds)) }).with(viewHTML, o.diffPage),
	})
}

// diffOne predicts the apply of one manifest (and, when it conflicts, the
// forced apply) and compares.
func (o *diffOptions) diffOne(ctx context.Context, src *applySource, m kube.Manifest, opts conflict.Options) (*diff.Computed, remedy.Target, error) {
	opts.AlsoForced = true
	asked, err := o.predict(ctx, src, m, opts, false)
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
