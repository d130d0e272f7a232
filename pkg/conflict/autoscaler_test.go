package conflict_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// csaWithReplicas is the web Deployment as client-side kubectl apply
// creates it from a manifest with replicas: n.
func csaWithReplicas(n int64) string {
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(webWith("nginx:1")), &obj.Object); err != nil {
		panic(err)
	}
	if err := unstructured.SetNestedField(obj.Object, n, "spec", "replicas"); err != nil {
		panic(err)
	}
	b, err := obj.MarshalJSON()
	if err != nil {
		panic(err)
	}
	obj.SetAnnotations(map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(b) + "\n"})
	out, err := yaml.Marshal(obj.Object)
	if err != nil {
		panic(err)
	}
	return string(out)
}

// TestReplicasHolders: the managers a handover to the autoscaler must
// start from are read from the live object, never the autoscaler's own
// controller.
func TestReplicasHolders(t *testing.T) {
	hpaScales := func(n int64) operation {
		return update{Manager: "kube-controller-manager", Subresource: "scale", Mutate: set(n, "spec", "replicas")}
	}
	tests := []struct {
		name string
		ops  []operation
		want []v1alpha1.ReplicasHolder
	}{
		{
			// The story of issue 18: kubectl apply (client-side), then
			// kubectl autoscale; the HPA's write took the field, the
			// annotation still holds it.
			name: "client-side apply, then the autoscaler scaled",
			ops:  []operation{update{Manager: "kubectl-client-side-apply", Create: csaWithReplicas(2)}, hpaScales(4)},
			want: []v1alpha1.ReplicasHolder{{Manager: "kubectl-client-side-apply", LastApplied: true}},
		},
		{
			name: "client-side apply under another name, not yet scaled",
			ops:  []operation{update{Manager: "deploy-script", Create: csaWithReplicas(2)}},
			want: []v1alpha1.ReplicasHolder{{Manager: "deploy-script", LastApplied: true}},
		},
		{
			name: "server-side applier owns replicas with the autoscaler",
			ops:  []operation{apply{Manager: "kubectl", Manifest: fmt.Sprintf(replicas, 3)}, hpaScales(3)},
			want: []v1alpha1.ReplicasHolder{{Manager: "kubectl"}},
		},
		{
			name: "an applier, then kubectl scale",
			ops:  []operation{apply{Manager: "argocd-controller", Manifest: webWith("nginx:1")}, update{Manager: "kubectl", Subresource: "scale", Mutate: set(int64(5), "spec", "replicas")}},
			want: []v1alpha1.ReplicasHolder{{Manager: "kubectl"}},
		},
		{
			// kubectl apply --server-side --field-manager=argocd-controller
			// after a client-side apply migrates the client-side entry
			// into argocd-controller's and leaves the annotation: no
			// client-side manager is left for a handover to start from.
			name: "the annotation holds replicas, its client-side entry migrated",
			ops:  []operation{apply{Manager: "argocd-controller", Manifest: csaWithReplicas(2)}},
			want: []v1alpha1.ReplicasHolder{{Manager: "argocd-controller"}},
		},
		{
			name: "the annotation holds replicas, its client-side entry migrated, then scaled",
			ops:  []operation{apply{Manager: "argocd-controller", Manifest: csaWithReplicas(2)}, hpaScales(4)},
			want: []v1alpha1.ReplicasHolder{},
		},
		{
			name: "held by a handover to the autoscaler",
			ops:  []operation{apply{Manager: "kubectl-ssa-handover", Manifest: fmt.Sprintf(replicas, 3)}},
			want: []v1alpha1.ReplicasHolder{},
		},
		{
			name: "the autoscaler alone",
			ops:  []operation{apply{Manager: "argocd-controller", Manifest: webWith("nginx:1")}, hpaScales(4)},
			want: []v1alpha1.ReplicasHolder{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &state{}
			for _, op := range tt.ops {
				op.Run(t, s)
			}
			if diff := cmp.Diff(tt.want, conflict.ReplicasHolders(s.Live)); diff != "" {
				t.Errorf("holders (-want +got):\n%s", diff)
			}
		})
	}
	if got := conflict.ReplicasHolders(nil); got != nil {
		t.Errorf("an object that does not exist: %v", got)
	}
}

// allNamespaces lists the autoscalers of every namespace, as a cluster
// does when asked for namespace "".
type allNamespaces struct {
	*conflict.OfflineSource
	hpas []unstructured.Unstructured
}

func (a allNamespaces) Autoscalers(context.Context, string) ([]unstructured.Unstructured, error) {
	return a.hpas, nil
}

// An autoscaler of another namespace with the same target name does not
// scale the object; a manifest without a namespace is looked up in none.
func TestAutoscalersOfTheObjectsNamespace(t *testing.T) {
	hpa := func(ns string, min int64) unstructured.Unstructured {
		return unstructured.Unstructured{Object: map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
			"metadata": map[string]any{"name": "web", "namespace": ns},
			"spec": map[string]any{"minReplicas": min, "maxReplicas": int64(9),
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}}
	}
	src, err := conflict.NewOfflineSource(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	lister := allNamespaces{OfflineSource: src, hpas: []unstructured.Unstructured{hpa("other", 2), hpa("shop", 4)}}
	obj := manifest(t, fmt.Sprintf(replicas, 3))
	got, warning := conflict.AutoscalersOf(context.Background(), lister, obj)
	if warning != "" || len(got) != 1 || got[0].MinReplicas != 4 {
		t.Errorf("autoscalers of shop/web: %+v %q", got, warning)
	}
	obj.SetNamespace("")
	if got, _ := conflict.AutoscalersOf(context.Background(), lister, obj); len(got) != 0 {
		t.Errorf("without a namespace: %+v", got)
	}
}
