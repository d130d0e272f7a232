package conflict_test

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"

	"github.com/kubectl-ssa/kubectl-ssa/internal/scenario"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/conflict"
)

func TestKeepsEmptiedMaps(t *testing.T) {
	for _, c := range []struct {
		minor, patch int
		want         bool
	}{{35, 4, false}, {36, 0, true}, {36, 2, true}, {36, 3, false}, {37, 1, false}} {
		if got := conflict.KeepsEmptiedMaps(c.minor, c.patch); got != c.want {
			t.Errorf("1.%d.%d: %v, want %v", c.minor, c.patch, got, c.want)
		}
	}
	if conflict.HasEmptyMap(map[string]any{"spec": map[string]any{"tags": []any{}}}) {
		t.Error("an empty list is not an empty map")
	}
	if !conflict.HasEmptyMap(map[string]any{"spec": map[string]any{"items": []any{map[string]any{"name": "a", "opts": map[string]any{}}}}}) {
		t.Error("a keyed item's {} is an empty map")
	}
}

// TestEmptiedMapKept: a manager applies a map's fields, then the map as
// {}. A 1.36.0-1.36.2 server keeps {}; later ones (and the embedded
// field manager) write null (e2e TestEmptiedContainerAfterApply measures
// both).
func TestEmptiedMapKept(t *testing.T) {
	cases := []struct {
		name          string
		schema        managedfields.TypeConverter
		crd           bool
		first, second string
		path          []string
	}{
		{"custom resource's map", managedfields.NewDeducedTypeConverter(), true,
			"apiVersion: example.com/v1\nkind: Hollow\nmetadata: {name: h, namespace: ns}\nspec: {size: l, labels: {a: x}}\n",
			"apiVersion: example.com/v1\nkind: Hollow\nmetadata: {name: h, namespace: ns}\nspec: {size: l, labels: {}}\n",
			[]string{"spec", "labels"}},
		{"container's securityContext", conflict.BuiltinSchema(), false,
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: app, image: nginx, securityContext: {runAsNonRoot: true}}]\n",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec:\n  containers: [{name: app, image: nginx, securityContext: {}}]\n",
			nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			first, err := conflict.Simulate(conflict.Input{Applied: scenario.Manifest(t, c.first), FieldManager: "owner", Schema: c.schema, CRD: c.crd})
			if err != nil {
				t.Fatal(err)
			}
			for _, keeps := range []bool{false, true} {
				r, err := conflict.Simulate(conflict.Input{Live: first.Result, Applied: scenario.Manifest(t, c.second), FieldManager: "owner", Schema: c.schema, CRD: c.crd, KeepsEmptiedMaps: keeps})
				if err != nil {
					t.Fatal(err)
				}
				var v any
				var found bool
				if c.path != nil {
					v, found, _ = unstructured.NestedFieldNoCopy(r.Result.Object, c.path...)
				} else {
					cs, _, _ := unstructured.NestedSlice(r.Result.Object, "spec", "containers")
					v, found = cs[0].(map[string]any)["securityContext"]
				}
				m, isMap := v.(map[string]any)
				kept := found && isMap && len(m) == 0
				if kept != keeps {
					t.Errorf("KeepsEmptiedMaps %v: the map is %v (present %v), want {} kept: %v", keeps, v, found, keeps)
				}
			}
		})
	}
}
