package ownership_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// A Secret's values are hidden inside the fields that hold them too.
func TestRedactValue(t *testing.T) {
	la := `{"apiVersion":"v1","kind":"Secret","stringData":{"password":"hunter2"}}`
	annotations := map[string]any{ownership.LastAppliedAnnotation: la, "team": "pay"}
	meta := map[string]any{"name": "s", "annotations": annotations}
	tests := []struct {
		path string
		in   any
		want any
	}{
		{".data.password", "aHVudGVyMg==", v1alpha1.Redacted},
		{".data", map[string]any{"password": "aHVudGVyMg=="}, v1alpha1.Redacted},
		{".metadata.annotations", annotations, map[string]any{ownership.LastAppliedAnnotation: v1alpha1.Redacted, "team": "pay"}},
		{".metadata", meta, map[string]any{"name": "s", "annotations": map[string]any{ownership.LastAppliedAnnotation: v1alpha1.Redacted, "team": "pay"}}},
		{".metadata.labels.a", "b", "b"},
		{".type", "Opaque", "Opaque"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			p, err := pathlang.ParsePath(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ownership.RedactValue(p, tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if annotations[ownership.LastAppliedAnnotation] != la {
		t.Errorf("the value itself was changed")
	}
}
