package ownership_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
)

// A Secret's stringData is written, converted to data, and never stored:
// its applier still owns the path, which the object does not have.
func TestAbsentOwnedPaths(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "s", "namespace": "ns", "managedFields": []any{
			map[string]any{"manager": "vault", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:stringData": map[string]any{"f:password": map[string]any{}}, "f:type": map[string]any{}}},
		}},
		"type": "Opaque",
		"data": map[string]any{"password": "aHVudGVyMg=="},
	}}
	r, err := ownership.Analyze(obj, ownership.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, f := range r.Fields {
		got[f.Path.APIServerString()] = f.Absent
	}
	if !got[".stringData.password"] || got[".type"] {
		t.Errorf("absent flags = %v, want only .stringData.password absent", got)
	}
}
