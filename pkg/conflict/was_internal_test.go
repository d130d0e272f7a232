package conflict

import (
	"encoding/json"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// TestNoteWasTellsNullFromAbsent: a reset field the live object holds as
// an explicit null (a nullable field with a default) was null, which is
// not the same as a field the live object lacks.
func TestNoteWasTellsNullFromAbsent(t *testing.T) {
	color := fieldpath.MakePathOrDie("spec", "color")
	size := fieldpath.MakePathOrDie("spec", "size")
	shape := fieldpath.MakePathOrDie("spec", "shape")
	r := &Simulation{Live: &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"color": nil, "size": "m"},
	}}}
	r.Reset = []v1alpha1.Reset{
		{Path: pathlang.Path(color), Value: "red", PathElements: color},
		{Path: pathlang.Path(size), Value: "l", PathElements: size},
		{Path: pathlang.Path(shape), Value: "round", PathElements: shape},
	}
	noteWas(r)
	if r.Reset[0].Was == nil || *r.Reset[0].Was != nil {
		t.Errorf("a live null: Was = %v, want a null value", r.Reset[0].Was)
	}
	if r.Reset[1].Was == nil || *r.Reset[1].Was != "m" {
		t.Errorf("a live value: Was = %v, want \"m\"", r.Reset[1].Was)
	}
	if r.Reset[2].Was != nil {
		t.Errorf("an absent field: Was = %v, want none", *r.Reset[2].Was)
	}
	b, err := json.Marshal(r.Reset)
	if err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if v, ok := back[0]["was"]; !ok || v != nil {
		t.Errorf("JSON of a live null: was = %v (present %v), want null", v, ok)
	}
	if _, ok := back[2]["was"]; ok {
		t.Errorf("JSON of an absent field has a was: %s", b)
	}
}
