package admission

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/apis/ssa/v1alpha1"
	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// lookup is the value at path in obj.
func lookup(obj map[string]any, path []string) (any, bool) {
	var cur any = obj
	for _, seg := range path {
		if key, value, ok := pathlang.SplitItemSegment(seg); ok {
			list, _ := cur.([]any)
			found := false
			for _, it := range list {
				if m, _ := it.(map[string]any); m != nil && m[key] == value {
					cur, found = m, true
					break
				}
			}
			if !found {
				return nil, false
			}
			continue
		}
		m, _ := cur.(map[string]any)
		v, ok := m[seg]
		if !ok {
			return nil, false
		}
		cur = v
	}
	return cur, true
}

// put sets path in obj to v, making the maps on the way; a list item on
// the way must exist (else nothing is set).
func put(obj map[string]any, path []string, v any) {
	if len(path) == 0 {
		return
	}
	var cur any = obj
	for _, seg := range path[:len(path)-1] {
		if key, value, ok := pathlang.SplitItemSegment(seg); ok {
			list, _ := cur.([]any)
			var found map[string]any
			for _, it := range list {
				if m, _ := it.(map[string]any); m != nil && m[key] == value {
					found = m
					break
				}
			}
			if found == nil {
				return
			}
			cur = found
			continue
		}
		m, _ := cur.(map[string]any)
		if m == nil {
			return
		}
		next, ok := m[seg]
		if !ok || next == nil {
			next = map[string]any{}
			m[seg] = next
		}
		cur = next
	}
	m, _ := cur.(map[string]any)
	if m == nil {
		return
	}
	m[path[len(path)-1]] = runtime.DeepCopyJSONValue(v)
}

// apply makes op on obj.
func applyOp(op v1alpha1.AdmissionOp, obj map[string]any) {
	switch op.Op {
	case v1alpha1.OpSet:
		if _, found := lookup(obj, op.Path); !found {
			put(obj, op.Path, op.Value)
		}
	case v1alpha1.OpReplace:
		put(obj, op.Path, op.Value)
	case v1alpha1.OpAppend:
		cur, _ := lookup(obj, op.Path)
		list, _ := cur.([]any)
		put(obj, op.Path, append(append([]any{}, list...), op.Value))
	case v1alpha1.OpRemove:
		if len(op.Path) == 0 {
			return
		}
		if parent, ok := lookup(obj, op.Path[:len(op.Path)-1]); ok {
			if m, _ := parent.(map[string]any); m != nil {
				delete(m, op.Path[len(op.Path)-1])
			}
		}
	}
}
