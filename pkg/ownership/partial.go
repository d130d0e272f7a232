package ownership

import (
	"fmt"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Partial builds the smallest object that sets the given paths to their
// values in obj: an applied configuration holding just those fields, with
// list items identified by their keys. Index elements can't be applied
// (a position is not an identity), so they are an error.
func Partial(obj map[string]any, paths []fieldpath.Path) (map[string]any, error) {
	out := map[string]any{}
	for _, p := range paths {
		v, ok := pathlang.Lookup(obj, p)
		if !ok {
			return nil, fmt.Errorf("%s is not set", p)
		}
		if err := setPath(out, p, v); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	return out, nil
}

// SetPath sets p to v in root, making the maps, lists and keyed list
// items on the way.
func SetPath(root map[string]any, p fieldpath.Path, v any) error {
	return setPath(root, p, v)
}

func setPath(root map[string]any, p fieldpath.Path, v any) error {
	var cur any = root
	var assign func(any)
	for i, pe := range p {
		last := i == len(p)-1
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return fmt.Errorf("%s is not a map", p[:i])
			}
			if last {
				m[*pe.FieldName] = v
				return nil
			}
			next, ok := m[*pe.FieldName]
			if !ok {
				if p[i+1].FieldName != nil {
					next = map[string]any{}
				} else {
					next = []any{}
				}
				m[*pe.FieldName] = next
			}
			name := *pe.FieldName
			assign = func(nv any) { m[name] = nv }
			cur = next
		case pe.Key != nil:
			l, _ := cur.([]any)
			var item map[string]any
			for _, it := range l {
				if im, ok := it.(map[string]any); ok && pathlang.MatchKey(im, *pe.Key) {
					item = im
				}
			}
			if item == nil {
				item = map[string]any{}
				for _, f := range *pe.Key {
					item[f.Name] = f.Value.Unstructured()
				}
				l = append(l, item)
				assign(l)
			}
			if last {
				return nil
			}
			list := l
			assign = func(nv any) { _ = list }
			cur = item
		case pe.Value != nil:
			l, _ := cur.([]any)
			found := false
			for _, it := range l {
				if value.Equals(value.NewValueInterface(it), *pe.Value) {
					found = true
				}
			}
			if !found {
				assign(append(l, (*pe.Value).Unstructured()))
			}
			return nil
		default:
			return fmt.Errorf("list index %s has no identity to apply by", pe)
		}
	}
	return nil
}
