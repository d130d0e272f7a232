// Package tools names the tools that write objects by the field managers
// they write as: kubectl's commands, Argo CD, Flux and Helm, and the
// labels and annotations the appliers leave on what they apply. Its
// catalogue (Lookup, Describe, ApplierOf, ToolOf, ToolFor) says what a
// field manager most likely is, from the managers of kubectl,
// Kubernetes' controllers, Argo CD, Flux, Helm, cert-manager and others.
// It is the one table of these facts for the engines that read them
// (audit's findings, conflict's descriptions and fixes), which don't
// import each other, and for the views. The names were read in each
// project's source (cited in catalogue.go).
package tools

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// The products, as people name them.
const (
	ProductKubectl = "kubectl"
	ProductArgoCD  = "Argo CD"
	ProductFlux    = "Flux"
	ProductHelm    = "Helm"
	// ProductKubectlApply leaves the last-applied annotation.
	ProductKubectlApply = "kubectl apply"
)

// kubectl's field managers: every command names its writes
// "kubectl-<verb>" (cmdutil.AddFieldManagerFlagVar in
// k8s.io/kubectl/pkg/cmd/...); "kubectl" is `kubectl apply
// --server-side`'s default, `kubectl scale`'s writes to /scale (the
// user agent's name), and every write of kubectl before 1.22.
const (
	Kubectl          = "kubectl"
	KubectlEdit      = "kubectl-edit"
	KubectlPatch     = "kubectl-patch"
	KubectlLabel     = "kubectl-label"
	KubectlAnnotate  = "kubectl-annotate"
	KubectlSet       = "kubectl-set"
	KubectlReplace   = "kubectl-replace"
	KubectlRollout   = "kubectl-rollout"
	KubectlScale     = "kubectl-scale"
	KubectlTaint     = "kubectl-taint"
	KubectlAutoscale = "kubectl-autoscale"
	KubectlCreate    = "kubectl-create"
	KubectlRun       = "kubectl-run"
	KubectlExpose    = "kubectl-expose"
	// KubectlLastApplied is `kubectl apply --server-side` keeping the
	// last-applied annotation of an object client-side apply applied.
	KubectlLastApplied = "kubectl-last-applied"
)

// KubectlVerb is the command of a "kubectl-<verb>" manager.
func KubectlVerb(manager string) (string, bool) {
	return strings.CutPrefix(manager, "kubectl-")
}

// The GitOps appliers' and Helm's field managers.
const (
	// ArgoCDSync is Argo CD's sync: a server-side apply that forces
	// conflicts, or an Update by the same name with client-side apply.
	ArgoCDSync = "argocd-controller"
	// ArgoCDUI writes the edits and resource actions of Argo CD's UI and
	// CLI (a patch without a field manager: its user agent's name).
	ArgoCDUI = "argocd-server"
	// ArgoCDApplicationController is the application controller's writes
	// outside its sync (kubectl auth reconcile of RBAC objects).
	ArgoCDApplicationController = "argocd-application-controller"
	// FluxKustomize applies Kustomizations, forcing conflicts.
	FluxKustomize = "kustomize-controller"
	// FluxHelm installs and upgrades HelmReleases with the Helm SDK,
	// forcing conflicts on server-side apply.
	FluxHelm = "helm-controller"
	// Helm is Helm's own binary (Helm 4 applies server-side; Helm 3's
	// patches are Updates).
	Helm = "helm"
)

// handEditors are the field managers of writes a person made outside
// any manifest: kubectl's imperative commands that edit an object, and
// Argo CD's UI (argocd-server writes what a person edits or patches
// there).
var handEditors = []string{KubectlEdit, KubectlPatch, KubectlLabel, KubectlAnnotate, KubectlSet, KubectlReplace, KubectlRollout, KubectlScale, ArgoCDUI}

// IsHandEdit tells whether an entry was written by hand: with kubectl
// (an Update by "kubectl" is kubectl before 1.22, which named every write
// so), or in Argo CD's UI.
func IsHandEdit(e metav1.ManagedFieldsEntry) bool {
	return slices.Contains(handEditors, e.Manager) || e.Manager == Kubectl && e.Operation == metav1.ManagedFieldsOperationUpdate
}

// FoldedByFlux tells whether Flux folds a main-resource entry of manager
// into its own before it applies (its default --override-manager:
// kubectl's managers by prefix, and before-first-apply;
// kustomize-controller's internal/controller kustomization_controller.go
// and fluxcd/pkg ssa/patch.go): Flux's apply overwrites their values
// with no conflict.
func FoldedByFlux(manager string) bool {
	return strings.HasPrefix(manager, Kubectl) || manager == ownership.BeforeFirstApply
}

// The labels and annotations the appliers leave on what they apply.
const (
	ArgoCDTrackingID      = "argocd.argoproj.io/tracking-id"
	FluxKustomizationName = "kustomize.toolkit.fluxcd.io/name"
	FluxHelmReleaseName   = "helm.toolkit.fluxcd.io/name"
	HelmReleaseName       = "meta.helm.sh/release-name"
	HelmReleaseNamespace  = "meta.helm.sh/release-namespace"
	ManagedBy             = "app.kubernetes.io/managed-by"
	ManagedByHelm         = "Helm"
)

// Mark is a label or an annotation that says who applies an object.
type Mark struct {
	// Label: a label; an annotation otherwise.
	Label bool
	Key   string
	// Value is the value the mark must have; "" any.
	Value string
	// Secret: the value is the object itself, never shown.
	Secret bool
	// Tool is who leaves it, for people.
	Tool string
	// Applier is the field manager of the tool that applies what carries
	// the mark; "" when the mark alone doesn't say (a chart's managed-by
	// label is also rendered by Argo CD and Flux).
	Applier string
}

// Marks in the order they name the applier: a GitOps tool's tracking
// before Helm's release annotations (Argo CD and Flux render charts),
// before kubectl apply's annotation (any of them may have kept one).
var Marks = []Mark{
	{Key: ArgoCDTrackingID, Tool: ProductArgoCD, Applier: ArgoCDSync},
	{Label: true, Key: FluxKustomizationName, Tool: ProductFlux, Applier: FluxKustomize},
	{Label: true, Key: FluxHelmReleaseName, Tool: ProductFlux, Applier: FluxHelm},
	{Key: HelmReleaseName, Tool: ProductHelm, Applier: Helm},
	{Label: true, Key: ManagedBy, Value: ManagedByHelm, Tool: ProductHelm},
	{Key: ownership.LastAppliedAnnotation, Secret: true, Tool: ProductKubectlApply, Applier: Kubectl},
}
