package ownership_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// A Secret's values are hidden inside the fields that hold them too.
func TestRedactValue(t *testing.T) {
	la := `{"apiVersion":"v1","kind":"Secret","stringData":{"password":"hunter2"}}`
	annotations := map[string]interface{}{ownership.LastAppliedAnnotation: la, "team": "pay"}
	meta := map[string]interface{}{"name": "s", "annotations": annotations}
	tests := []struct {
		path string
		in   interface{}
		want interface{}
	}{
		{".data.password", "aHVudGVyMg==", ownership.Redacted},
		{".data", map[string]interface{}{"password": "aHVudGVyMg=="}, ownership.Redacted},
		{".metadata.annotations", annotations, map[string]interface{}{ownership.LastAppliedAnnotation: ownership.Redacted, "team": "pay"}},
		{".metadata", meta, map[string]interface{}{"name": "s", "annotations": map[string]interface{}{ownership.LastAppliedAnnotation: ownership.Redacted, "team": "pay"}}},
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
