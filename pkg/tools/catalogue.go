package tools

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
)

// Known is what the catalogue knows of a field manager.
type Known struct {
	// Product is the project it belongs to, for people: "Argo CD",
	// "Flux", "Helm", "cert-manager", "Kubernetes", "kubectl", ...
	Product string
	// Says what the manager is and how it writes.
	Says string
	// Controller: it writes its fields again by itself (a controller, an
	// autoscaler, a CA injector): taken from it, they come back.
	Controller bool
	// Tool is the applier whose own settings fix the conflicts of its
	// applies (--for is inferred from --field-manager with it).
	Tool remedy.Tool
	// Forces: its applies force conflicts, so they never fail on one:
	// they take the fields and set the manifest's values.
	Forces bool
	// ClientSide: an Update entry of this manager is its client-side
	// apply, a three-way merge patch, and it goes on writing so: its
	// writes never conflict, they set the manifest's values and delete
	// what its last write set and the manifest drops, whoever owns it now.
	ClientSide bool
}

// anySub and noSub match an entry's subresource: any, or the main
// resource only; any other value is that subresource.
const (
	anySub = ""
	noSub  = "-"
)

// entry is one row of the catalogue: a manager name (a prefix when it
// ends in "*"), the operation ("" either), the subresource and the end
// of the owned path ("" any) it matches.
type entry struct {
	name, op, sub, pathSuffix string
	known                     Known
}

func (e entry) matches(o v1alpha1.Owner, path string) bool {
	if prefix, ok := strings.CutSuffix(e.name, "*"); ok {
		if !strings.HasPrefix(o.Manager, prefix) {
			return false
		}
	} else if o.Manager != e.name {
		return false
	}
	switch {
	case e.op != "" && string(o.Operation) != e.op,
		e.sub == noSub && o.Subresource != "",
		e.sub != anySub && e.sub != noSub && string(o.Subresource) != e.sub,
		e.pathSuffix != "" && !strings.HasSuffix(path, e.pathSuffix):
		return false
	}
	return true
}

const (
	kubernetes = "Kubernetes"
	certMgr    = "cert-manager"
	crossplane = "Crossplane"
)

// catalogue is read top down: the first row that matches says. The names
// and operations were read in each project's source, cited per group;
// kubectl's, Argo CD's, Flux's and Helm's are the constants of go
// (audit reads them there too).
var catalogue = []entry{
	// kubectl: every command names its writes "kubectl-<verb>"
	// (cmdutil.AddFieldManagerFlagVar in k8s.io/kubectl/pkg/cmd/...);
	// scale sets none, so its /scale writes carry the user agent's
	// "kubectl"; apply is "kubectl-client-side-apply", or "kubectl" with
	// --server-side (pkg/cmd/apply/apply.go, FieldManagerClientSideApply).
	{name: Kubectl, sub: "scale", known: Known{Product: ProductKubectl, Says: "`kubectl scale` (kubectl writes /scale under the manager \"kubectl\")"}},
	// The HPA controller scales through /scale as kube-controller-manager.
	{name: "kube-controller-manager", sub: "scale", known: Known{Product: kubernetes, Controller: true,
		Says: "the HorizontalPodAutoscaler: kube-controller-manager's horizontal-pod-autoscaler controller scales the object through /scale"}},
	{name: "*", sub: "scale", known: Known{Says: "a write through the /scale subresource (kubectl scale, an autoscaler, or a scaling controller)"}},
	{name: "kube-controller-manager", pathSuffix: ".spec.replicas", known: Known{Product: kubernetes, Controller: true,
		Says: "the horizontal-pod-autoscaler controller (it writes .spec.replicas of the scale target) or another kube-controller-manager controller"}},
	{name: "kube-controller-manager", known: Known{Product: kubernetes, Controller: true, Says: "a controller in kube-controller-manager (deployment, replicaset, HPA, garbage collector, ...)"}},
	{name: ownership.ClientSideApplyManager, known: Known{Product: ProductKubectl,
		Says: "a leftover of client-side `kubectl apply` (before the object was server-side applied); `kubectl ssa migrate` converts it"}},
	{name: KubectlLastApplied, known: Known{Product: ProductKubectl, Says: "`kubectl apply --server-side` keeping the last-applied annotation of an object that was client-side applied"}},
	{name: Kubectl, op: "Apply", known: Known{Product: ProductKubectl, Says: "`kubectl apply --server-side` with the default field manager"}},
	{name: Kubectl, op: "Update", known: Known{Product: ProductKubectl, Says: "an older kubectl write (kubectl before 1.22 named every write \"kubectl\")"}},
	{name: KubectlEdit, known: Known{Product: ProductKubectl, Says: "a manual `kubectl edit`"}},
	{name: KubectlPatch, known: Known{Product: ProductKubectl, Says: "a manual `kubectl patch`"}},
	{name: KubectlLabel, known: Known{Product: ProductKubectl, Says: "a manual `kubectl label`"}},
	{name: KubectlAnnotate, known: Known{Product: ProductKubectl, Says: "a manual `kubectl annotate`"}},
	{name: KubectlSet, known: Known{Product: ProductKubectl, Says: "a manual `kubectl set` (image, env, resources, ...)"}},
	{name: KubectlRollout, known: Known{Product: ProductKubectl, Says: "`kubectl rollout` (restart, undo, pause, resume)"}},
	{name: KubectlReplace, known: Known{Product: ProductKubectl, Says: "a manual `kubectl replace`"}},
	{name: KubectlTaint, known: Known{Product: ProductKubectl, Says: "a manual `kubectl taint`"}},
	{name: KubectlAutoscale, known: Known{Product: ProductKubectl, Says: "an imperative `kubectl autoscale` (it creates a HorizontalPodAutoscaler)"}},
	{name: KubectlCreate, known: Known{Product: ProductKubectl, Says: "an imperative `kubectl create`"}},
	{name: KubectlRun, known: Known{Product: ProductKubectl, Says: "an imperative `kubectl run`"}},
	{name: KubectlExpose, known: Known{Product: ProductKubectl, Says: "an imperative `kubectl expose`"}},
	{name: ownership.HandoverManager, known: Known{Product: "kubectl-ssa",
		Says: "kubectl ssa handover's temporary manager: it holds fields handed to a controller until the controller writes them"}},
	{name: ownership.BeforeFirstApply, known: Known{Product: kubernetes,
		Says: "the fields that existed before the first server-side apply (the apiserver creates this manager when an object without managedFields is applied)"}},
	{name: ownership.AncientChanges, known: Known{Product: kubernetes, Says: "older Update managers merged by the apiserver (it keeps at most 10 Update managers)"}},

	// Argo CD (argoproj/argo-cd@37ee0097, v3.5): its sync applies as
	// common.ArgoCDSSAManager "argocd-controller" (common/common.go,
	// controller/sync.go WithServerSideApplyManager) with --force-conflicts
	// (gitops-engine/pkg/utils/kube/resource_ops.go: ForceConflicts =
	// serverSideApply); without ServerSideApply=true the same manager name
	// goes to kubectl's client-side apply (sync_context.go passes it either
	// way; kubectl's apply.go helper WithFieldManager), an Update. The UI's
	// edits and resource actions are PatchResource in
	// server/application/application.go: a patch with no field manager, so
	// the apiserver names it after the user agent "argocd-server/..."
	// (cmd/argocd-server/commands/argocd_server.go). The application
	// controller's own other writes carry "argocd-application-controller"
	// (kubectl auth reconcile of RBAC objects, argo-cd#20815).
	{name: ArgoCDSync, op: "Apply", known: Known{Product: ProductArgoCD, Tool: remedy.ArgoCD, Forces: true,
		Says: "Argo CD's sync (server-side apply as \"argocd-controller\"; it forces conflicts)"}},
	{name: ArgoCDSync, op: "Update", known: Known{Product: ProductArgoCD, Tool: remedy.ArgoCD, ClientSide: true,
		Says: "Argo CD's sync with client-side apply (ServerSideApply=true not set: kubectl's three-way merge, which never conflicts): a different manager from its server-side sync"}},
	{name: ArgoCDUI, known: Known{Product: ProductArgoCD,
		Says: "Argo CD's UI: an edit or a resource action in the Argo CD web UI or CLI (argocd app patch-resource, actions run), written by argocd-server"}},
	{name: ArgoCDApplicationController, known: Known{Product: ProductArgoCD, Controller: true,
		Says: "Argo CD's application controller writing outside its sync manager (kubectl auth reconcile of RBAC objects, its own bookkeeping)"}},
	{name: "argocd*", known: Known{Product: ProductArgoCD, Says: "an Argo CD component"}},

	// Flux: kustomize-controller applies as its controller name with
	// ForceOwnership (fluxcd/kustomize-controller@186fb3b2 main.go
	// controllerName; fluxcd/pkg@e2cfd1a2 ssa/manager_apply.go apply); it
	// writes its own objects' status as "gotk-kustomize-controller".
	// helm-controller sets the Helm SDK's kube.ManagedFieldsManager to
	// "helm-controller" and forces conflicts on server-side apply
	// (fluxcd/helm-controller@0f61a860 main.go,
	// internal/action/install.go and upgrade.go). Both take
	// --override-manager: managers whose entries they fold into their own
	// before each apply, as they do with kubectl's and before-first-apply;
	// kustomize-controller folds its own Update entry too ("to undo
	// changes made by the controller before SSA",
	// internal/controller/kustomization_controller.go), so it applies
	// server-side whatever its entry. helm-controller's upgrades are
	// client-side when the HelmRelease's spec.upgrade.serverSideApply is
	// "disabled", or "auto" (the default) and the release's last revision
	// was applied client-side (api/v2/helmrelease_types.go
	// ServerSideApplyMode, internal/action/upgrade.go); it forces only
	// server-side applies, and corrects drift with JSON patches
	// (internal/action/diff.go ApplyDiff), recorded as Update too.
	{name: FluxKustomize, op: "Apply", known: Known{Product: ProductFlux, Tool: remedy.Flux, Forces: true,
		Says: "Flux's kustomize-controller applying a Kustomization (server-side apply; it forces conflicts)"}},
	{name: FluxKustomize, op: "Update", known: Known{Product: ProductFlux,
		Says: "Flux's kustomize-controller before it applied server-side (it folds this entry into its own at its next apply)"}},
	{name: FluxHelm, op: "Apply", known: Known{Product: ProductFlux, Tool: remedy.Flux, Forces: true,
		Says: "Flux's helm-controller installing or upgrading a HelmRelease (the Helm SDK with server-side apply; it forces conflicts)"}},
	{name: FluxHelm, op: "Update", known: Known{Product: ProductFlux, Tool: remedy.Flux, ClientSide: true,
		Says: "Flux's helm-controller upgrading a HelmRelease client-side (spec.upgrade.serverSideApply \"disabled\", or \"auto\" on a release applied client-side: the Helm SDK's three-way merge, which never conflicts), or correcting drift with a patch"}},
	{name: "gotk-*", known: Known{Product: ProductFlux, Controller: true, Says: "a Flux controller writing its own objects' status"}},

	// Helm names its writes after its binary, "helm", unless an SDK user
	// sets kube.ManagedFieldsManager (helm/helm@e9b85e4d
	// pkg/kube/client.go getManagedFieldsManager). Helm 4 applies
	// server-side without forcing (pkg/kube/client.go
	// patchResourceServerSide; install --server-side defaults to true,
	// upgrade and rollback to auto, --force-conflicts to false:
	// pkg/cmd/install.go, upgrade.go); Helm 3 sends three-way merge
	// patches, recorded as Update (v3.21.4 pkg/kube/client.go).
	{name: Helm, op: "Apply", known: Known{Product: ProductHelm, Tool: remedy.Helm,
		Says: "Helm 4 (helm install/upgrade with server-side apply, its default for new releases; it forces conflicts only with --force-conflicts)"}},
	{name: Helm, op: "Update", known: Known{Product: ProductHelm, Tool: remedy.Helm,
		Says: "Helm 3, or Helm 4 with client-side apply (--server-side=false, or a release kept client-side by --server-side=auto): a different manager from Helm 4's server-side apply"}},
	{name: "terraform-provider-helm*", known: Known{Product: ProductHelm,
		Says: "Terraform's Helm provider (the Helm SDK names its writes after the program)"}},
	{name: "helm*", known: Known{Product: ProductHelm, Says: "Helm, or a program built on the Helm SDK (which names its writes after the program)"}},

	// cert-manager's cainjector applies caBundle with ForceOwnership as
	// the prefix of its user agent, "cert-manager-cainjector"
	// (cert-manager/cert-manager@2d0d7f7f
	// pkg/controller/cainjector/reconciler.go and setup.go,
	// pkg/util/useragent.go); before v1.21 (or without its ServerSideApply
	// feature gate, off by default until then) it was an Update by the same
	// name.
	{name: "cert-manager-cainjector", pathSuffix: ".caBundle", known: Known{Product: certMgr, Controller: true,
		Says: "cert-manager's CA injector (cainjector) injecting the CA into caBundle (cert-manager.io/inject-ca-from); it writes it again whenever the CA changes"}},
	{name: "cert-manager-cainjector", known: Known{Product: certMgr, Controller: true, Says: "cert-manager's CA injector (cainjector)"}},
	{name: "cert-manager*", known: Known{Product: certMgr, Controller: true, Says: "a cert-manager component"}},
	// kube-webhook-certgen (jet/kube-webhook-certgen@cf887ac4
	// pkg/k8s/k8s.go, and ingress-nginx's fork) Gets the webhook
	// configuration, sets every webhook's caBundle (and failurePolicy) and
	// Updates it without a field manager: its user agent's
	// "kube-webhook-certgen".
	{name: "kube-webhook-certgen", known: Known{Product: "kube-webhook-certgen", Controller: true,
		Says: "kube-webhook-certgen (a chart's patch Job, e.g. ingress-nginx's) writing the webhooks' caBundle and failurePolicy; it writes them again at each run"}},

	// Crossplane (crossplane/crossplane@2d040d2d
	// internal/controller/apiextensions/...): composed resources are
	// applied by "apiextensions.crossplane.io/composed/<hash of the XR>",
	// XRs by ".../composite", claims by ".../claim".
	{name: "apiextensions.crossplane.io/composed/*", known: Known{Product: crossplane, Controller: true,
		Says: "Crossplane composing this resource for a composite resource (XR)"}},
	{name: "apiextensions.crossplane.io/*", known: Known{Product: crossplane, Controller: true, Says: "Crossplane's composite resource (XR) or claim controller"}},
	{name: "pkg.crossplane.io/*", known: Known{Product: crossplane, Controller: true, Says: "Crossplane's package manager"}},
	{name: "crossplane*", known: Known{Product: crossplane, Controller: true, Says: "Crossplane"}},
	// Karpenter's user agent is "karpenter/<version>"
	// (kubernetes-sigs/karpenter@22664681 pkg/operator/operator.go).
	{name: "karpenter", known: Known{Product: "Karpenter", Controller: true, Says: "Karpenter (nodes, NodeClaims and its objects' status)"}},
	// The VPA's components are the binaries updater, recommender and
	// admission-controller (kubernetes/autoscaler@55c37cd5
	// vertical-pod-autoscaler/pkg/*/Dockerfile); the updater resizes pods
	// in place through pods/resize. It never writes a Deployment.
	{name: "updater", sub: "resize", known: Known{Product: "VerticalPodAutoscaler", Controller: true,
		Says: "the VerticalPodAutoscaler's updater resizing the pod in place"}},
	{name: "recommender", known: Known{Product: "VerticalPodAutoscaler", Controller: true,
		Says: "likely the VerticalPodAutoscaler's recommender (it writes VerticalPodAutoscalers' status)"}},

	{name: "kube-scheduler", known: Known{Product: kubernetes, Controller: true, Says: "the scheduler (it binds pods)"}},
	{name: "kubelet", known: Known{Product: kubernetes, Controller: true, Says: "the kubelet (node and pod status)"}},
	{name: "kube-apiserver", known: Known{Product: kubernetes, Controller: true, Says: "the apiserver itself (defaults, status or metadata it maintains)"}},
}

// Lookup says what a manager most likely is, from its name, operation,
// subresource and the path it owns (the apiserver's form).
func Lookup(o v1alpha1.Owner, path string) (Known, bool) {
	return lookup(o, path, true)
}

// IsController tells whether a manager writes by itself (a controller,
// an autoscaler, a Kubernetes component) rather than for a person (kubectl,
// Argo CD's UI, k9s, Lens, a script): by its catalogue row, the generic
// rows that match any name passed over (a /scale write is a person's or a
// controller's by who wrote it), then by its name (an autoscaler's too).
func IsController(o v1alpha1.Owner) bool {
	if ownership.IsSystemManager(o.Manager) {
		return true
	}
	if k, ok := lookup(o, "", false); ok {
		return k.Controller
	}
	return strings.Contains(o.Manager, "autoscaler")
}

// lookup is Lookup, with or without the rows that match any name.
func lookup(o v1alpha1.Owner, path string, generic bool) (Known, bool) {
	for _, e := range catalogue {
		if (generic || e.name != "*") && e.matches(o, path) {
			return e.known, true
		}
	}
	switch name := o.Manager; {
	case ownership.IsGenericManager(name):
		return Known{Says: "a client that did not set a field manager; the name is its HTTP user agent"}, true
	case strings.HasSuffix(name, "-controller") || strings.HasSuffix(name, "-operator") || strings.Contains(name, "manager"):
		return Known{Controller: true, Says: "a controller or operator (by its name)"}, true
	}
	return Known{}, false
}

// Describe says what a manager most likely is; empty when nothing is
// known.
func Describe(o v1alpha1.Owner, path string) string {
	k, _ := Lookup(o, path)
	return k.Says
}

// ToolOf is the tool an applier's field manager is (the --for its fixes
// are written for), as it applies: server-side.
func ToolOf(fieldManager string) (remedy.Tool, bool) {
	k, ok := Lookup(v1alpha1.Owner{Manager: fieldManager, Operation: "Apply"}, "")
	return k.Tool, ok && k.Tool != ""
}

// ApplierOf is what the catalogue knows of an applier's field manager.
func ApplierOf(fieldManager string) (Known, bool) {
	return Lookup(v1alpha1.Owner{Manager: fieldManager, Operation: "Apply"}, "")
}

// WriterOf is what the catalogue knows of an applier's field manager as
// it writes the object now, op being its entry's operation
// (Report.ApplierOperation): its client-side row when its Update entry
// is a client-side apply it goes on with (helm-controller, Argo CD),
// its server-side row otherwise (kustomize-controller folds its Update
// entry and applies server-side).
func WriterOf(fieldManager string, op metav1.ManagedFieldsOperationType) (Known, bool) {
	if op == metav1.ManagedFieldsOperationUpdate {
		if k, ok := Lookup(v1alpha1.Owner{Manager: fieldManager, Operation: "Update"}, ""); ok && k.ClientSide {
			return k, true
		}
	}
	return ApplierOf(fieldManager)
}

// ToolFor is the tool whose settings the fixes of an apply are written
// in: --for when given, else the tool the applier's field manager is
// (argocd-controller: Argo CD; kustomize-controller, helm-controller:
// Flux; helm: Helm); empty when neither says.
func ToolFor(t remedy.Target) remedy.Tool {
	if t.Tool != "" {
		return t.Tool
	}
	tool, _ := ToolOf(t.FieldManager)
	return tool
}
