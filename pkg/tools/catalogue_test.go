package tools_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/remedy"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/tools"
)

// The catalogue names each tool's managers precisely, first match wins.
func TestLookup(t *testing.T) {
	tests := []struct {
		owner      v1alpha1.Owner
		path       string
		product    string
		says       string // a part of what it says
		controller bool
		tool       remedy.Tool
	}{
		{v1alpha1.Owner{Manager: "kube-controller-manager", Operation: "Update", Subresource: "scale"}, ".spec.replicas", "Kubernetes", "the HorizontalPodAutoscaler", true, ""},
		{v1alpha1.Owner{Manager: "kubectl", Operation: "Update", Subresource: "scale"}, ".spec.replicas", "kubectl", "`kubectl scale`", false, ""},
		{v1alpha1.Owner{Manager: "keda-operator", Operation: "Update", Subresource: "scale"}, ".spec.replicas", "", "a write through the /scale subresource", false, ""},
		{v1alpha1.Owner{Manager: "kube-controller-manager", Operation: "Update"}, ".spec.replicas", "Kubernetes", "horizontal-pod-autoscaler controller", true, ""},
		{v1alpha1.Owner{Manager: "argocd-controller", Operation: "Apply"}, "", "Argo CD", "Argo CD's sync", false, remedy.ArgoCD},
		{v1alpha1.Owner{Manager: "argocd-controller", Operation: "Update"}, "", "Argo CD", "client-side apply", false, remedy.ArgoCD},
		{v1alpha1.Owner{Manager: "argocd-server", Operation: "Update"}, ".spec.ports", "Argo CD", "Argo CD's UI", false, ""},
		{v1alpha1.Owner{Manager: "argocd-application-controller", Operation: "Update"}, "", "Argo CD", "kubectl auth reconcile", true, ""},
		{v1alpha1.Owner{Manager: "kustomize-controller", Operation: "Apply"}, "", "Flux", "applying a Kustomization", false, remedy.Flux},
		{v1alpha1.Owner{Manager: "helm-controller", Operation: "Apply"}, "", "Flux", "HelmRelease", false, remedy.Flux},
		{v1alpha1.Owner{Manager: "gotk-kustomize-controller", Operation: "Update", Subresource: "status"}, "", "Flux", "status", true, ""},
		{v1alpha1.Owner{Manager: "helm", Operation: "Apply"}, "", "Helm", "Helm 4", false, remedy.Helm},
		{v1alpha1.Owner{Manager: "helm", Operation: "Update"}, "", "Helm", "Helm 3", false, remedy.Helm},
		{v1alpha1.Owner{Manager: "terraform-provider-helm_v2.17.0_x5", Operation: "Update"}, "", "Helm", "Terraform", false, ""},
		{v1alpha1.Owner{Manager: "cert-manager-cainjector", Operation: "Apply"}, `.webhooks[name="v.example.com"].clientConfig.caBundle`, "cert-manager", "injecting the CA into caBundle", true, ""},
		{v1alpha1.Owner{Manager: "cert-manager-cainjector", Operation: "Update"}, ".metadata.labels", "cert-manager", "CA injector", true, ""},
		{v1alpha1.Owner{Manager: "kube-webhook-certgen", Operation: "Update"}, ".webhooks", "kube-webhook-certgen", "caBundle and failurePolicy", true, ""},
		{v1alpha1.Owner{Manager: "apiextensions.crossplane.io/composed/0f3c", Operation: "Apply"}, "", "Crossplane", "composing this resource", true, ""},
		{v1alpha1.Owner{Manager: "karpenter", Operation: "Update"}, "", "Karpenter", "NodeClaims", true, ""},
		{v1alpha1.Owner{Manager: "updater", Operation: "Update", Subresource: "resize"}, "", "VerticalPodAutoscaler", "in place", true, ""},
		{v1alpha1.Owner{Manager: "kubectl-edit", Operation: "Update"}, "", "kubectl", "`kubectl edit`", false, ""},
		{v1alpha1.Owner{Manager: "kubectl-autoscale", Operation: "Update"}, "", "kubectl", "`kubectl autoscale`", false, ""},
		{v1alpha1.Owner{Manager: "Go-http-client", Operation: "Update"}, "", "", "HTTP user agent", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.owner.Manager+"/"+string(tt.owner.Operation)+"/"+string(tt.owner.Subresource), func(t *testing.T) {
			k, ok := tools.Lookup(tt.owner, tt.path)
			if !ok {
				t.Fatal("not in the catalogue")
			}
			got := struct {
				Product    string
				Controller bool
				Tool       remedy.Tool
			}{k.Product, k.Controller, k.Tool}
			want := got
			want.Product, want.Controller, want.Tool = tt.product, tt.controller, tt.tool
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
			if !strings.Contains(k.Says, tt.says) {
				t.Errorf("says %q, want %q in it", k.Says, tt.says)
			}
		})
	}
	if _, ok := tools.Lookup(v1alpha1.Owner{Manager: "my-script", Operation: "Update"}, ""); ok {
		t.Error("an unknown name is known")
	}
}

// A /scale write is a person's or a controller's by who wrote it:
// audit's --expect-manager reports a person's as drift.
func TestIsController(t *testing.T) {
	scale := func(m string) v1alpha1.Owner {
		return v1alpha1.Owner{Manager: m, Operation: "Update", Subresource: "scale"}
	}
	tests := []struct {
		owner v1alpha1.Owner
		want  bool
	}{
		{scale("kubectl"), false},
		{scale("kubectl-scale"), false},
		{scale("argocd-server"), false},
		{scale("k9s"), false},
		{scale("lens"), false},
		{scale("Go-http-client"), false},
		{scale("kube-controller-manager"), true},
		{scale("keda-operator"), true},
		{scale("rollouts-controller"), true},
		{scale("autoscaler"), true},
		{scale("cluster-autoscaler"), true},
		{scale("kubectl-autoscale"), false},
		{v1alpha1.Owner{Manager: "kubelet", Operation: "Update", Subresource: "status"}, true},
		{v1alpha1.Owner{Manager: "updater", Operation: "Update", Subresource: "resize"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.owner.Manager, func(t *testing.T) {
			if got := tools.IsController(tt.owner); got != tt.want {
				t.Errorf("IsController(%+v) = %v, want %v", tt.owner, got, tt.want)
			}
		})
	}
}

func TestToolFor(t *testing.T) {
	tests := []struct {
		target remedy.Target
		want   remedy.Tool
	}{
		{remedy.Target{FieldManager: "argocd-controller"}, remedy.ArgoCD},
		{remedy.Target{FieldManager: "kustomize-controller"}, remedy.Flux},
		{remedy.Target{FieldManager: "helm-controller"}, remedy.Flux},
		{remedy.Target{FieldManager: "helm"}, remedy.Helm},
		{remedy.Target{FieldManager: "kubectl"}, ""},
		{remedy.Target{FieldManager: "argocd-server"}, ""},
		// --for wins over the manager.
		{remedy.Target{FieldManager: "my-argo", Tool: remedy.ArgoCD}, remedy.ArgoCD},
		{remedy.Target{FieldManager: "helm", Tool: remedy.Flux}, remedy.Flux},
	}
	for _, tt := range tests {
		if got := tools.ToolFor(tt.target); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.target, got, tt.want)
		}
	}
}
