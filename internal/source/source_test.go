package source

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
	obj := &unstructured.Unstructured{Object: map[string]interface{}{
		"apiVersion": "example.com/v1", "kind": "Gizmo",
		"metadata": map[string]interface{}{"name": "g"}, "spec": map[string]interface{}{"size": "l"},
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
