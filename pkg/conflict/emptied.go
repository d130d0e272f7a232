package conflict

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/ownership"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// KeepsEmptiedMaps tells whether an apiserver of Kubernetes 1.minor.patch
// keeps a map an apply empties: 1.36.0-1.36.2, whose
// structured-merge-diff v6.3.2 (typed/remove.go) keeps a container whose
// nested items an apply's pruning removed as {} or [] where v6.3.3
// (1.36.3) and later remove it (the embedded field manager's way).
//
// Measured on a 1.36.1 apiserver (e2e TestEmptiedContainerAfterApply):
// where a manager that set fields of a map (a custom resource's map, a
// map of maps' element, a struct, a keyed item's map; a built-in's
// pointer struct: a container's securityContext or its capabilities)
// applies the map as {}, the server keeps {} (1.37 writes null, which a
// custom resource's schema refuses, and a built-in's Go type drops).
// Dropping the map from the manifest, or emptying a set list as [], or a
// built-in's map with omitempty (a ConfigMap's data, a nodeSelector),
// come out as on 1.37.
func KeepsEmptiedMaps(minor, patch int) bool {
	return minor == 36 && patch < 3
}

// HasEmptyMap tells whether obj holds a map {} anywhere below its top
// level: the only shape KeepsEmptiedMaps changes a prediction for.
func HasEmptyMap(obj map[string]any) bool {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 {
				return true
			}
			for _, c := range v {
				if walk(c) {
					return true
				}
			}
		case []any:
			for _, c := range v {
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	for _, v := range obj {
		if walk(v) {
			return true
		}
	}
	return false
}

// keepEmptied puts back, in the field manager's result, the maps an
// older server keeps (KeepsEmptiedMaps): every map the applied manifest
// sets as {} where live held fields and the result holds none.
func keepEmptied(tc managedfields.TypeConverter, applied, live, result *unstructured.Unstructured) {
	if live == nil || result == nil || !HasEmptyMap(applied.Object) {
		return
	}
	tv, err := tc.ObjectToTyped(applied)
	if err != nil {
		return
	}
	set, err := tv.ToFieldSet()
	if err != nil {
		return
	}
	set.Leaves().Iterate(func(p fieldpath.Path) {
		if len(p) < 2 {
			return
		}
		if v, ok := pathlang.Lookup(applied.Object, p); !ok || !emptyMap(v) {
			return
		}
		if v, ok := pathlang.Lookup(live.Object, p); !ok || !nonEmptyMap(v) {
			return
		}
		if v, ok := pathlang.Lookup(result.Object, p); ok && v != nil {
			return
		}
		if _, ok := pathlang.Lookup(result.Object, p[:len(p)-1]); !ok {
			return
		}
		_ = ownership.SetPath(result.Object, p.Copy(), map[string]any{})
	})
}

func emptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) == 0
}

func nonEmptyMap(v any) bool {
	m, ok := v.(map[string]any)
	return ok && len(m) > 0
}
