package conflict

import (
	"strings"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// Describe says what a manager most likely is, from its name, operation,
// subresource and the path it owns; empty when nothing is known.
func Describe(o ownership.Owner, path string) string {
	name := o.Manager
	switch {
	case name == "kubectl" && o.Subresource == "scale":
		return "`kubectl scale` (kubectl writes /scale under the manager \"kubectl\")"
	case o.Subresource == "scale":
		return "a write through the /scale subresource (kubectl scale, an autoscaler, or a scaling controller)"
	case name == "kube-controller-manager" && strings.HasSuffix(path, ".spec.replicas"):
		return "the horizontal-pod-autoscaler controller (it writes .spec.replicas of the scale target) or another kube-controller-manager controller"
	case name == "kube-controller-manager":
		return "a controller in kube-controller-manager (deployment, replicaset, HPA, garbage collector, ...)"
	case name == ownership.ClientSideApplyManager:
		return "a leftover of client-side `kubectl apply` (before the object was server-side applied); `kubectl ssa migrate` converts it"
	case name == "kubectl" && o.Operation == "Apply":
		return "`kubectl apply --server-side` with the default field manager"
	case name == "kubectl" && o.Operation == "Update":
		return "an older kubectl write (kubectl before 1.22 named every write \"kubectl\")"
	case name == "kubectl-edit":
		return "a manual `kubectl edit`"
	case name == "kubectl-patch":
		return "a manual `kubectl patch`"
	case name == "kubectl-label":
		return "a manual `kubectl label`"
	case name == "kubectl-annotate":
		return "a manual `kubectl annotate`"
	case name == "kubectl-set":
		return "a manual `kubectl set` (image, env, resources, ...)"
	case name == "kubectl-rollout":
		return "`kubectl rollout` (restart, undo, pause, resume)"
	case name == "kubectl-create", name == "kubectl-run", name == "kubectl-expose":
		return "an imperative `" + strings.Replace(name, "-", " ", 1) + "`"
	case name == "kubectl-ssa-handover":
		return "kubectl ssa handover's temporary manager: it holds fields handed to a controller until the controller writes them"
	case name == "before-first-apply":
		return "the fields that existed before the first server-side apply (the apiserver creates this manager when an object without managedFields is applied)"
	case name == "ancient-changes":
		return "older Update managers merged by the apiserver (it keeps at most 10 Update managers)"
	case name == "helm" || strings.HasPrefix(name, "helm"):
		return "Helm (helm install/upgrade)"
	case name == "argocd-controller" || strings.HasPrefix(name, "argocd"):
		return "Argo CD (server-side apply sync)"
	case name == "kustomize-controller" || name == "helm-controller" || strings.HasPrefix(name, "flux"):
		return "Flux (" + name + ")"
	case name == "kube-scheduler":
		return "the scheduler (it binds pods)"
	case name == "kubelet":
		return "the kubelet (node and pod status)"
	case name == "kube-apiserver":
		return "the apiserver itself (defaults, status or metadata it maintains)"
	case ownership.IsGenericManager(name):
		return "a client that did not set a field manager; the name is its HTTP user agent"
	case strings.HasSuffix(name, "-controller") || strings.HasSuffix(name, "-operator") || strings.Contains(name, "manager"):
		return "a controller or operator (by its name)"
	}
	return ""
}
