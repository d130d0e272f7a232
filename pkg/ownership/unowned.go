package ownership

import (
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

func unowned(content map[string]any, tree *Node) []fieldpath.Path {
	var out []fieldpath.Path
	// path is one buffer, extended and cut back as the walk goes; paths
	// that are kept are copied.
	path := make(fieldpath.Path, 0, 16)
	var visit func(v any, n *Node, root bool)
	visit = func(v any, n *Node, root bool) {
		// neverOwned paths are two elements deep at most
		if !root && len(path) <= 2 && pathlang.NeverOwned(pathlang.Path(path).APIServerString()) {
			return
		}
		if n != nil && (n.Atomic() || (len(n.Owners) > 0 && isScalar(v))) {
			return
		}
		m, isMap := v.(map[string]any)
		// Below the root and .metadata, a path nobody owns is listed
		// whole; those two are never owned themselves.
		if n == nil && (!isMap || !root && !isMetadata(path)) {
			out = append(out, path.Copy())
			return
		}
		switch t := v.(type) {
		case map[string]any:
			if n != nil && len(n.fields) >= len(m) && allOwned(m, n) {
				return
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				pe := fieldpath.PathElement{FieldName: &k}
				path = append(path, pe)
				visit(m[k], n.Child(pe), false)
				path = path[:len(path)-1]
			}
		case []any:
			for i, item := range t {
				pe, child := n.ItemElement(item, i)
				path = append(path, pe)
				visit(item, child, false)
				path = path[:len(path)-1]
			}
		}
	}
	visit(content, tree, true)
	return out
}

// allOwned tells whether every key of m is owned whole, as unowned's
// visit would find, so the keys need not be sorted and visited.
func allOwned(m map[string]any, n *Node) bool {
	for k, v := range m {
		c := n.fields[k]
		if c == nil || !c.Atomic() && (len(c.Owners) == 0 || !isScalar(v)) {
			return false
		}
	}
	return true
}

func isMetadata(p fieldpath.Path) bool {
	return len(p) == 1 && p[0].FieldName != nil && *p[0].FieldName == "metadata"
}
