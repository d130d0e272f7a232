package admission

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// lookup is the value at path in obj.
func lookup(obj map[string]interface{}, path []string) (interface{}, bool) {
	var cur interface{} = obj
	for _, seg := range path {
		if key, value, ok := pathlang.SplitItemSegment(seg); ok {
			list, _ := cur.([]interface{})
			found := false
			for _, it := range list {
				if m, _ := it.(map[string]interface{}); m != nil && m[key] == value {
					cur, found = m, true
					break
				}
			}
			if !found {
				return nil, false
			}
			continue
		}
		m, _ := cur.(map[string]interface{})
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
func put(obj map[string]interface{}, path []string, v interface{}) {
	if len(path) == 0 {
		return
	}
	var cur interface{} = obj
	for _, seg := range path[:len(path)-1] {
		if key, value, ok := pathlang.SplitItemSegment(seg); ok {
			list, _ := cur.([]interface{})
			var found map[string]interface{}
			for _, it := range list {
				if m, _ := it.(map[string]interface{}); m != nil && m[key] == value {
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
		m, _ := cur.(map[string]interface{})
		if m == nil {
			return
		}
		next, ok := m[seg]
		if !ok || next == nil {
			next = map[string]interface{}{}
			m[seg] = next
		}
		cur = next
	}
	m, _ := cur.(map[string]interface{})
	if m == nil {
		return
	}
	m[path[len(path)-1]] = runtime.DeepCopyJSONValue(v)
}

// apply makes op on obj.
func applyOp(op Op, obj map[string]interface{}) {
	switch op.Op {
	case OpSet:
		if _, found := lookup(obj, op.Path); !found {
			put(obj, op.Path, op.Value)
		}
	case OpReplace:
		put(obj, op.Path, op.Value)
	case OpAppend:
		cur, _ := lookup(obj, op.Path)
		list, _ := cur.([]interface{})
		put(obj, op.Path, append(append([]interface{}{}, list...), op.Value))
	case OpRemove:
		if len(op.Path) == 0 {
			return
		}
		if parent, ok := lookup(obj, op.Path[:len(op.Path)-1]); ok {
			if m, _ := parent.(map[string]interface{}); m != nil {
				delete(m, op.Path[len(op.Path)-1])
			}
		}
	}
}
