package migrate

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// verify over the object as the server stores it after the write: the
// generation is the server's counter, which a Deployment bumps when its
// annotations change (--remove-last-applied); a value that changed fails.
func TestVerifyGeneration(t *testing.T) {
	deployment := func(generation int64, annotations map[string]string, replicas int64) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "app", "namespace": "ns", "uid": "u1", "resourceVersion": "7"},
			"spec":     map[string]any{"replicas": replicas},
		}}
		u.SetGeneration(generation)
		u.SetAnnotations(annotations)
		return u
	}
	withLA := map[string]string{ownership.LastAppliedAnnotation: "{}", "note": "x"}
	without := map[string]string{"note": "x"}
	tests := []struct {
		name   string
		after  *unstructured.Unstructured
		remove bool
		want   string
	}{
		{name: "the annotation's removal bumps the generation", after: deployment(3, without, 2), remove: true},
		{name: "a managedFields write leaves it", after: deployment(2, withLA, 2)},
		{name: "a value changed", after: deployment(3, without, 5), remove: true, want: ".spec.replicas differs from before the migration"},
		{name: "more than one write", after: deployment(4, without, 2), remove: true, want: ".metadata.generation went from 2 to 4, which the migration's one write does not explain (it adds one at most)"},
		{name: "back", after: deployment(1, withLA, 2), want: ".metadata.generation went from 2 to 1, which the migration's one write does not explain (it adds one at most)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scheme := runtime.NewScheme()
			c := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{deployments: "DeploymentList"}, tt.after)
			it := Item{Resource: Resource{GVR: deployments, Kind: "Deployment", Namespaced: true}, Meta: &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}}}
			written := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ResourceVersion: "7"}}
			err := verify(context.Background(), Clients{Dynamic: c}, it, deployment(2, withLA, 2), written, &Plan{RemoveLastApplied: tt.remove}, RunOptions{})
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("verify: %q, want %q", got, tt.want)
			}
		})
	}
}
