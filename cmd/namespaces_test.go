package cmd

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
)

// A suggested kubectl apply -n NS -f FILE is refused when an object of
// FILE names another namespace: -n only when every object of the input is
// in NS (an explicit -n held for all of them).
func TestMixedNamespaces(t *testing.T) {
	obj := func(kind, ns, source string) kube.Manifest {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetName("a")
		u.SetNamespace(ns)
		return kube.Manifest{Object: u, Source: source}
	}
	read := []kube.Manifest{obj("ConfigMap", "other", "multi.yaml"), obj("ConfigMap", "shop", "multi.yaml"),
		obj("ConfigMap", "shop", "one.yaml"), obj("ConfigMap", "", "bare.yaml")}
	tests := []struct {
		name, source, ns string
		kc               *kube.Cluster
		kustomize        string
		want             bool
	}{
		{"two namespaces in the file", "multi.yaml", "other", nil, "", true},
		{"one namespace in the file", "one.yaml", "shop", nil, "", false},
		{"a kustomization is one input", "one.yaml", "shop", nil, "k", true},
		{"no namespace, no discovery: unknown", "bare.yaml", "default", nil, "", true},
		{"explicit -n holds for every object", "multi.yaml", "other", &kube.Cluster{Namespace: "other", Enforce: true}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := &applyInput{read: read, kc: tt.kc}
			o.files.Kustomize = tt.kustomize
			if got := o.mixedNamespaces(tt.source, tt.ns); got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}
