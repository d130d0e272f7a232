package admission

import (
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// mergeKey is the key the lists a policy most often changes are merged
// by (containers, env, volumes, volumeMounts, ports by name).
const mergeKey = "name"

// changeOps are the ops that take before (the object the policies saw) to
// the value after at path p: a list of named items that gained or changed
// items is said item by item (a policy that adds one env var adds that
// entry; it does not replace the containers), whenever those ops, made on
// before, give exactly after (the order of the items included); otherwise
// the one op that replaces the value, or sets it where it was absent.
func changeOps(before map[string]any, p []string, after any) []v1alpha1.AdmissionOp {
	was, had, _ := unstructured.NestedFieldNoCopy(before, p...)
	if !had {
		return []v1alpha1.AdmissionOp{{Op: v1alpha1.OpSet, Path: p, Value: after}}
	}
	whole := []v1alpha1.AdmissionOp{{Op: v1alpha1.OpReplace, Path: p, Value: after}}
	ops, ok := diffValue(p, was, after)
	if !ok || len(ops) == 0 {
		return whole
	}
	check := runtime.DeepCopyJSON(before)
	for _, op := range ops {
		applyOp(op, check)
	}
	if got, _, _ := unstructured.NestedFieldNoCopy(check, p...); !reflect.DeepEqual(got, after) {
		return whole
	}
	return ops
}

// diffValue is the ops from b to a at path, and whether they can be said
// finer than a replacement of the value.
func diffValue(path []string, b, a any) ([]v1alpha1.AdmissionOp, bool) {
	if reflect.DeepEqual(b, a) {
		return nil, true
	}
	switch bv := b.(type) {
	case map[string]any:
		if av, ok := a.(map[string]any); ok {
			return diffMap(path, bv, av)
		}
	case []any:
		if av, ok := a.([]any); ok {
			return diffList(path, bv, av)
		}
	}
	return []v1alpha1.AdmissionOp{{Op: v1alpha1.OpReplace, Path: path, Value: a}}, true
}

func diffMap(path []string, b, a map[string]any) ([]v1alpha1.AdmissionOp, bool) {
	var ops []v1alpha1.AdmissionOp
	for _, k := range slices.Sorted(maps.Keys(unionOf(b, a))) {
		at := append(append([]string{}, path...), k)
		bv, had := b[k]
		av, has := a[k]
		switch {
		case !has:
			ops = append(ops, v1alpha1.AdmissionOp{Op: v1alpha1.OpRemove, Path: at})
		case !had:
			ops = append(ops, v1alpha1.AdmissionOp{Op: v1alpha1.OpSet, Path: at, Value: av})
		default:
			more, ok := diffValue(at, bv, av)
			if !ok {
				return nil, false
			}
			ops = append(ops, more...)
		}
	}
	return ops, true
}

// diffList says a list of named items item by item: the items added, and
// the changes of the items kept; a list that lost an item, or whose items
// are not all named, is replaced whole.
func diffList(path []string, b, a []any) ([]v1alpha1.AdmissionOp, bool) {
	byName := map[string]any{}
	for _, it := range b {
		name, ok := itemName(it)
		if _, twice := byName[name]; !ok || twice {
			return nil, false
		}
		byName[name] = it
	}
	var ops []v1alpha1.AdmissionOp
	kept := 0
	for _, it := range a {
		name, ok := itemName(it)
		if !ok {
			return nil, false
		}
		was, found := byName[name]
		if !found {
			ops = append(ops, v1alpha1.AdmissionOp{Op: v1alpha1.OpAppend, Path: path, Value: it})
			continue
		}
		kept++
		more, ok := diffValue(append(append([]string{}, path...), pathlang.ItemSegment(mergeKey, name)), was, it)
		if !ok {
			return nil, false
		}
		ops = append(ops, more...)
	}
	return ops, kept == len(b)
}

func unionOf(b, a map[string]any) map[string]any {
	out := maps.Clone(b)
	maps.Copy(out, a)
	return out
}

func itemName(it any) (string, bool) {
	m, _ := it.(map[string]any)
	name, ok := m[mergeKey].(string)
	return name, ok
}
