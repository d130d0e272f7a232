package cmd

import (
	"github.com/spf13/cobra"
)

// explainOptions are explain-conflict's: the apply to predict, and
// whether to verify the prediction with the server's dry run.
type explainOptions struct {
	applyInput
	verify bool
	// printer prints the explanations (validate chooses it).
	printer printer[explained]
}

func newExplainConflictCmd(g *globalOptions) *cobra.Command {
	o := &explainOptions{applyInput: newApplyInput(g)}
	cmd := &cobra.Command{
		Use:   "explain-conflict -f MANIFEST [flags]",
		Short: "Predict a server-side apply locally and explain its conflicts",
		Long:  explainConflictLong,
		Example: `  # Would this apply conflict, and with whom?
  kubectl ssa explain-conflict -f deploy.yaml

  # As another field manager, e.g. a CI pipeline's
  kubectl ssa explain-conflict -f manifests/ -R --field-manager ci-deploy

  # What a forced apply would take from whom
  kubectl ssa explain-conflict -f deploy.yaml --force-conflicts

  # As Argo CD's sync would apply it: the fixes as an Application's ignoreDifferences
  kubectl ssa explain-conflict -f deploy.yaml --field-manager argocd-controller

  # A chart's upgrade as Helm 4 applies it, with the chart change and Helm's flags
  helm template shop ./chart -n shop | kubectl ssa explain-conflict -n shop -f - --field-manager helm

  # The fixes as Flux settings, whatever the field manager
  kubectl ssa explain-conflict -k overlays/prod --field-manager flux-prod --for flux

  # Gate a CI pipeline on conflicts, with a machine-readable report
  kubectl ssa explain-conflict -k overlays/prod -o json > report.json || echo "conflicts"

  # One page to share in a review: the conflicts, their owners and the fixes
  kubectl ssa explain-conflict -k overlays/prod -o html > conflicts.html

  # Would the next helm upgrade of release "web" conflict (Helm 4 preflight)?
  helm template web ./chart -n shop -f values.yaml --no-hooks | kubectl ssa explain-conflict -n shop --helm-release web -f -

  # The same upgrade of a release Helm 3 installed, switched to server-side
  helm template web ./chart -n shop --no-hooks | kubectl ssa explain-conflict -n shop --helm-release web -f - --helm-server-side=true

  # Check the prediction against the server's own dry run
  kubectl ssa explain-conflict -f deploy.yaml --verify

  # Offline, against a saved object
  kubectl get deploy web -o yaml --show-managed-fields > live.yaml
  kubectl ssa explain-conflict --local --live-file live.yaml -f deploy.yaml`,
		Args: manifestArgs,
		RunE: runE(o),
	}
	o.addFlags(cmd, "simulate", "Simulate a forced apply and show who loses which fields.",
		"Also write the fixes as settings of the tool that applies: argocd, flux or helm (default: the tool --field-manager is: argocd-controller, kustomize-controller, helm-controller, helm).")
	cmd.Flags().BoolVar(&o.verify, "verify", false, "Also send the apply to the server as a dry run (dryRun=All) and report any difference from the prediction.")
	return cmd
}

// complete takes what the flags given imply (applyInput's complete).
func (o *explainOptions) complete(cmd *cobra.Command, _ []string) error {
	o.applyInput.complete(cmd)
	return nil
}

// validate checks the flags of the apply to explain, with --verify, and
// chooses the printer of -o.
func (o *explainOptions) validate() error {
	if err := o.applyInput.validate("simulate", o.verify); err != nil {
		return err
	}
	o.choosePrinter()
	return nil
}

// explainConflictLong is the command's --help text.
const explainConflictLong = `Simulate "kubectl apply --server-side" of the manifests locally, with the
apiserver's own field-manager code and the cluster's OpenAPI schema, and
explain the result: every conflict (who owns the field, since when, the value
they hold against yours, what that manager most likely is, and the commands
that resolve it), the fields the apply would remove, and the fields it would
NOT remove because another manager still owns them.

The ways out are also written as settings of the tool that applies, chosen
with --for argocd|flux|helm, or from --field-manager (argocd-controller is
Argo CD's sync; kustomize-controller and helm-controller are Flux's;
helm is Helm 4): an Application's ignoreDifferences with the sync options
that honour it, a Kustomization's or HelmRelease's drift ignore rules, the
chart change, Helm 4's flags. Each leaves the fields to their owners at
their live values, except --force-conflicts, which says what it takes. The
explanation names the tool behind each owner too (Argo CD's UI, an HPA,
cert-manager's CA injector, ...). With -o json they are resolutions with a
tool, a snippet and where it goes (into).

Nothing is written and no patch permission is needed: the live objects and
the schema are read, the apply is computed here. --verify also sends the same
apply to the server as a dry run (which needs patch permission and runs
admission webhooks) and reports any difference.

Without a cluster, --local --live-file LIVE.yaml simulates against saved
objects (kubectl get -o yaml --show-managed-fields) with the built-in schema
compiled into kubectl-ssa; custom resources then need --schema CRD.yaml, or
are typed by deduction (all lists atomic), which the report says.

Before a Helm 4 upgrade, pipe the chart's next render in with the release's
name: --helm-release NAME predicts it as helm upgrade writes it (field
manager helm, the label and annotations Helm adds): server-side for a
release applied so; for one still recorded as client-side apply, Helm's
client-side patch, which --server-side=auto (helm's default) keeps, and
which deletes every field the last revision rendered and the render drops,
whoever owns it now. --helm-server-side=true predicts the switch instead.

Admission is read from the cluster: built-in plugins (default StorageClass
and IngressClass, storage protection finalizers, a Pod's ServiceAccount,
Priority, tolerations, RuntimeClass and LimitRanger, PodSecurity) are
modelled; validating and mutating admission policies, and webhooks'
matchConditions, are evaluated with the apiserver's own code by the
companion ssa-admission-eval installed beside kubectl-ssa; webhooks are
matched and named, not called.

Exit status, as kubectl diff: 0 the apply would succeed, 1 it would
conflict or admission denies it (a modelled plugin, an evaluated policy),
2 an error, 4 the prediction is not exact (a webhook that matches, a
policy that can't be evaluated here, or admission could not be read).
With --verify: 3 when the prediction differs from the server's dry run (a
denial included); a prediction that was not exact is resolved by the
server's answer instead (0 it applies, 1 it refuses), unless what differs
is what admission can't change (managedFields, conflicts); 4 when the
server refused or could not run the dry run (no patch permission; a
Namespace the input creates first), so that nothing was verified.
5: the apply succeeds but resets a field a controller sets (.spec.replicas
of an object a HorizontalPodAutoscaler scales, in the cluster or in the
input): the report's ways out hand it over first.`
