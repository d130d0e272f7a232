package source

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery/cached/memory"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kubectl-ssa/kubectl-ssa/internal/kube"
	"github.com/kubectl-ssa/kubectl-ssa/internal/testkit"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

// Cluster.Schema reads the current document once when the index's
// lacks the applied kind, instead of typing the object by deduction.
func TestClusterSchemaRefreshes(t *testing.T) {
	l := &conflict.Loader{
		Client: testkit.OpenAPIIndex{"apis/example.com/v1": testkit.OpenAPIDoc{Body: testkit.OpenAPIDocument("Dial")}},
		Fetch:  func(context.Context, string) ([]byte, error) { return testkit.OpenAPIDocument("Dial", "Gizmo"), nil },
	}
	s := &Cluster{Loader: l}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Gizmo",
		"metadata": map[string]any{"name": "g"}, "spec": map[string]any{"size": "l"},
	}}
	tc, reason, err := s.Schema(context.Background(), obj, nil)
	if err != nil || tc == nil || reason != "" {
		t.Fatalf("schema %v, reason %q, err %v", tc, reason, err)
	}
	l.Fetch = func(context.Context, string) ([]byte, error) { return testkit.OpenAPIDocument("Dial"), nil }
	s.Loader = &conflict.Loader{Client: l.Client, Fetch: l.Fetch}
	if tc, reason, _ := s.Schema(context.Background(), obj, nil); tc != nil || reason != "the cluster does not publish one" {
		t.Errorf("a kind the server does not publish: %v %q", tc, reason)
	}
}

// A version a manager recorded that the server serves, but the index does
// not name yet (a CRD just given it), is read too: left out, its managers
// would be dropped, and a conflict with them missed.
func TestClusterSchemaReadsAServedVersionTheIndexLacks(t *testing.T) {
	fake := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}}
	fake.Resources = []*metav1.APIResourceList{
		{GroupVersion: "example.com/v1", APIResources: []metav1.APIResource{{Name: "gizmos", Kind: "Gizmo", Namespaced: true}}},
		{GroupVersion: "example.com/v2", APIResources: []metav1.APIResource{{Name: "gizmos", Kind: "Gizmo", Namespaced: true}}},
	}
	var fetched []string
	l := &conflict.Loader{
		Client: testkit.OpenAPIIndex{"apis/example.com/v2": testkit.OpenAPIDoc{Body: testkit.OpenAPIDocumentAt("v2", "Gizmo")}},
		Fetch: func(_ context.Context, path string) ([]byte, error) {
			fetched = append(fetched, path)
			if path == "apis/example.com/v1" {
				return testkit.OpenAPIDocumentAt("v1", "Gizmo"), nil
			}
			return nil, apierrors.NewNotFound(schema.GroupResource{}, path)
		},
	}
	s := &Cluster{Cluster: &kube.Cluster{Discovery: memory.NewMemCacheClient(fake), Mapper: meta.NewDefaultRESTMapper(nil)}, Loader: l}
	applied := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v2", "kind": "Gizmo", "metadata": map[string]any{"name": "g"}}}
	live := applied.DeepCopy()
	live.SetAPIVersion("example.com/v1")
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: "alpha", Operation: metav1.ManagedFieldsOperationApply, APIVersion: "example.com/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:size":{}}}`)},
		{Manager: "old", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "example.com/v0", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{}}`)},
	})
	tc, reason, err := s.Schema(context.Background(), applied, live)
	if err != nil || reason != "" {
		t.Fatalf("reason %q, err %v", reason, err)
	}
	if sch := tc.(*conflict.Schema); !sch.Has(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Gizmo"}) {
		t.Error("the schema lacks Gizmo at v1, where alpha applied")
	}
	// v0 is not served: not read.
	if len(fetched) != 1 || fetched[0] != "apis/example.com/v1" {
		t.Errorf("fetched %v, want apis/example.com/v1 only", fetched)
	}
}
