package admission

import (
	"maps"
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

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
func changeOps(before map[string]interface{}, p []string, after interface{}) []Op {
	was, had, _ := unstructured.NestedFieldNoCopy(before, p...)
	if !had {
		return []Op{{Op: OpSet, Path: p, Value: after}}
	}
	whole := []Op{{Op: OpReplace, Path: p, Value: after}}
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
func diffValue(path []string, b, a interface{}) ([]Op, bool) {
	if reflect.DeepEqual(b, a) {
		return nil, true
	}
	switch bv := b.(type) {
	case map[string]interface{}:
		if av, ok := a.(map[string]interface{}); ok {
			return diffMap(path, bv, av)
		}
	case []interface{}:
		if av, ok := a.([]interface{}); ok {
			return diffList(path, bv, av)
		}
	}
	return []Op{{Op: OpReplace, Path: path, Value: a}}, true
}

func diffMap(path []string, b, a map[string]interface{}) ([]Op, bool) {
	var ops []Op
	for _, k := range slices.Sorted(maps.Keys(unionOf(b, a))) {
		at := append(append([]string{}, path...), k)
		bv, had := b[k]
		av, has := a[k]
		switch {
		case !has:
			ops = append(ops, Op{Op: OpRemove, Path: at})
		case !had:
			ops = append(ops, Op{Op: OpSet, Path: at, Value: av})
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
func diffList(path []string, b, a []interface{}) ([]Op, bool) {
	byName := map[string]interface{}{}
	for _, it := range b {
		name, ok := itemName(it)
		if _, twice := byName[name]; !ok || twice {
			return nil, false
		}
		byName[name] = it
	}
	var ops []Op
	kept := 0
	for _, it := range a {
		name, ok := itemName(it)
		if !ok {
			return nil, false
		}
		was, found := byName[name]
		if !found {
			ops = append(ops, Op{Op: OpAppend, Path: path, Value: it})
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

func unionOf(b, a map[string]interface{}) map[string]interface{} {
	out := maps.Clone(b)
	maps.Copy(out, a)
	return out
}

func itemName(it interface{}) (string, bool) {
	m, _ := it.(map[string]interface{})
	name, ok := m[mergeKey].(string)
	return name, ok
}
