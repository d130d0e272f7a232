package ownership

import (
	"sort"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/kubectl-ssa/kubectl-ssa/pkg/pathlang"
)

// Restrictor cuts one object down to the parts a field set reaches, at a
// cost in the size of the set, not of the object. structured-merge-diff's
// extraction walks the whole object for every set; over the restricted
// object it gives the same result (the parts of the object outside the
// set's paths never reach its output), so that extracting every entry of
// an object with thousands of managers stays linear.
//
// The object must not change while the Restrictor is used: the lists'
// indexes are kept from one set to the next.
type Restrictor struct {
	obj   map[string]any
	lists map[listIndexKey]map[string]int
}

// listIndexKey names a list of the object by its first item's address,
// with the kind of path element it is indexed by (a key's field names, or
// "v" for values).
type listIndexKey struct {
	first *any
	by    string
}

// NewRestrictor returns a Restrictor of obj.
func NewRestrictor(obj map[string]any) *Restrictor {
	return &Restrictor{obj: obj, lists: map[listIndexKey]map[string]int{}}
}

// Restrict returns the parts of the object set reaches, sharing the
// values that set owns whole with the object, and apiVersion and kind,
// which type it. A list item reached by its key keeps its key fields.
func (r *Restrictor) Restrict(set *fieldpath.Set) map[string]any {
	out, _ := r.node(r.obj, set).(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for _, k := range []string{"apiVersion", "kind"} {
		if v, ok := r.obj[k]; ok {
			out[k] = v
		}
	}
	return out
}

// node restricts v to s. A map or list that s reaches none of the members
// of becomes nil, as structured-merge-diff's extraction makes it; an
// empty one stays as it is.
func (r *Restrictor) node(v any, s *fieldpath.Set) any {
	switch t := v.(type) {
	case map[string]any:
		if len(t) == 0 {
			return v
		}
		out := map[string]any{}
		visit := func(pe fieldpath.PathElement) {
			if pe.FieldName == nil {
				return
			}
			c, ok := t[*pe.FieldName]
			if !ok {
				return
			}
			if child, ok := s.Children.Get(pe); ok {
				c = r.node(c, child)
			}
			out[*pe.FieldName] = c
		}
		s.Members.Iterate(visit)
		s.Children.Iterate(visit)
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		if len(t) == 0 {
			return v
		}
		picked := map[int]fieldpath.PathElement{}
		visit := func(pe fieldpath.PathElement) {
			if i, ok := r.find(t, pe); ok {
				picked[i] = pe
			}
		}
		s.Members.Iterate(visit)
		s.Children.Iterate(visit)
		if len(picked) == 0 {
			return nil
		}
		idx := make([]int, 0, len(picked))
		for i := range picked {
			idx = append(idx, i)
		}
		sort.Ints(idx)
		out := make([]any, 0, len(idx))
		for _, i := range idx {
			item, pe := t[i], picked[i]
			if child, ok := s.Children.Get(pe); ok {
				item = withKeyFields(r.node(item, child), t[i], pe)
			}
			out = append(out, item)
		}
		return out
	}
	return v
}

// withKeyFields gives a restricted list item back the key fields that
// name it, without which it is not an item of its list.
func withKeyFields(restricted, item any, pe fieldpath.PathElement) any {
	full, ok := item.(map[string]any)
	if pe.Key == nil || !ok {
		return restricted
	}
	out, _ := restricted.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	for _, f := range *pe.Key {
		if v, ok := full[f.Name]; ok {
			out[f.Name] = v
		}
	}
	return out
}

// find returns the index of the item pe names in l, through an index of
// l built once for all sets.
func (r *Restrictor) find(l []any, pe fieldpath.PathElement) (int, bool) {
	switch {
	case pe.Index != nil:
		return *pe.Index, *pe.Index >= 0 && *pe.Index < len(l)
	case pe.Key == nil && pe.Value == nil:
		return 0, false
	}
	k := listIndexKey{first: &l[0], by: "v"}
	var names []string
	if pe.Key != nil {
		for _, f := range *pe.Key {
			names = append(names, f.Name)
		}
		k.by = "k:" + strings.Join(names, ",")
	}
	index, ok := r.lists[k]
	if !ok {
		index = make(map[string]int, len(l))
		for i, item := range l {
			var ipe fieldpath.PathElement
			if pe.Key != nil {
				m, isMap := item.(map[string]any)
				if !isMap {
					continue
				}
				if ipe, isMap = pathlang.KeyElement(m, names); !isMap {
					continue
				}
			} else {
				v := value.NewValueInterface(item)
				ipe = fieldpath.PathElement{Value: &v}
			}
			if _, dup := index[ipe.String()]; !dup {
				index[ipe.String()] = i
			}
		}
		r.lists[k] = index
	}
	if i, ok := index[pe.String()]; ok {
		return i, true
	}
	// The same value can print differently (a float and an integer):
	// the slow path compares values.
	for i, item := range l {
		if pe.Key != nil {
			if m, ok := item.(map[string]any); ok && pathlang.MatchKey(m, *pe.Key) {
				return i, true
			}
		} else if value.Equals(value.NewValueInterface(item), *pe.Value) {
			return i, true
		}
	}
	return 0, false
}
