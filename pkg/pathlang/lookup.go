package pathlang

import (
	"fmt"
	"strings"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// Lookup returns the value at path p in an unstructured object.
func Lookup(obj any, p fieldpath.Path) (any, bool) {
	cur := obj
	for _, pe := range p {
		var ok bool
		if cur, ok = LookupElement(cur, pe); !ok {
			return nil, false
		}
	}
	return cur, true
}

// LookupElement returns the child of v that pe names.
func LookupElement(v any, pe fieldpath.PathElement) (any, bool) {
	switch {
	case pe.FieldName != nil:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		c, ok := m[*pe.FieldName]
		return c, ok
	case pe.Index != nil:
		l, ok := v.([]any)
		if !ok || *pe.Index < 0 || *pe.Index >= len(l) {
			return nil, false
		}
		return l[*pe.Index], true
	case pe.Key != nil:
		l, _ := v.([]any)
		for _, item := range l {
			if m, ok := item.(map[string]any); ok && MatchKey(m, *pe.Key) {
				return item, true
			}
		}
	case pe.Value != nil:
		l, _ := v.([]any)
		for _, item := range l {
			if value.Equals(interfaceValue(item), *pe.Value) {
				return item, true
			}
		}
	}
	return nil, false
}

// pathString is p.String(), the apiserver's form, built with fewer
// allocations.
func pathString(p fieldpath.Path) string {
	n := 0
	for _, pe := range p {
		if pe.FieldName != nil {
			n += 1 + len(*pe.FieldName)
		} else {
			n += 16
		}
	}
	var b strings.Builder
	b.Grow(n)
	for _, pe := range p {
		if pe.FieldName != nil {
			b.WriteByte('.')
			b.WriteString(*pe.FieldName)
		} else {
			b.WriteString(pe.String())
		}
	}
	return b.String()
}

func interfaceValue(v any) value.Value { return value.NewValueInterface(v) }

// MatchKey tells whether a list item has the key's values.
func MatchKey(item map[string]any, key value.FieldList) bool {
	for _, f := range key {
		v, ok := item[f.Name]
		if !ok || !value.Equals(interfaceValue(v), f.Value) {
			return false
		}
	}
	return true
}

// KeyElement is the key element of a list item: its values of the
// list's key fields names, false when it lacks one.
func KeyElement(item map[string]any, names []string) (fieldpath.PathElement, bool) {
	fields := make(value.FieldList, 0, len(names))
	for _, n := range names {
		v, ok := item[n]
		if !ok {
			return fieldpath.PathElement{}, false
		}
		fields = append(fields, value.Field{Name: n, Value: interfaceValue(v)})
	}
	fields.Sort()
	return fieldpath.PathElement{Key: &fields}, true
}

// neverOwned are the paths the apiserver strips before tracking ownership.
var neverOwned = map[string]bool{
	".apiVersion":                          true,
	".kind":                                true,
	".metadata.name":                       true,
	".metadata.namespace":                  true,
	".metadata.uid":                        true,
	".metadata.resourceVersion":            true,
	".metadata.generation":                 true,
	".metadata.creationTimestamp":          true,
	".metadata.managedFields":              true,
	".metadata.selfLink":                   true,
	".metadata.deletionTimestamp":          true,
	".metadata.deletionGracePeriodSeconds": true,
}

// NeverOwned tells whether the apiserver never tracks ownership of path.
func NeverOwned(p string) bool { return neverOwned[p] }

// Remove deletes the value at path p from obj, and the maps and lists
// that held nothing else (they were there only for it). It tells whether
// p was there. A position (an index element) names no item for sure in a
// document other than the one the path was read from, so it is an error
// when the path reaches it.
func Remove(obj map[string]any, p fieldpath.Path) (bool, error) {
	if len(p) == 0 {
		return false, nil
	}
	_, removed, _, err := remove(obj, p)
	return removed, err
}

// remove deletes p below v and returns v as it is then (a list may be a
// new slice); empty tells whether v is left empty by it.
func remove(v any, p fieldpath.Path) (out any, removed, empty bool, err error) {
	pe := p[0]
	switch {
	case pe.Index != nil:
		if _, ok := LookupElement(v, pe); ok {
			return v, false, false, fmt.Errorf("%s names a list item by its position", pathString(p))
		}
		return v, false, false, nil
	case pe.FieldName != nil:
		m, ok := v.(map[string]any)
		if !ok {
			return v, false, false, nil
		}
		child, ok := m[*pe.FieldName]
		if !ok {
			return v, false, false, nil
		}
		if len(p) > 1 {
			nc, removed, empty, err := remove(child, p[1:])
			if !removed || err != nil {
				return v, removed, false, err
			}
			if !empty {
				m[*pe.FieldName] = nc
				return v, true, false, nil
			}
		}
		delete(m, *pe.FieldName)
		return v, true, len(m) == 0, nil
	}
	l, ok := v.([]any)
	if !ok {
		return v, false, false, nil
	}
	for i, item := range l {
		if !sameItem(item, pe) {
			continue
		}
		if len(p) > 1 {
			ni, removed, empty, err := remove(item, p[1:])
			if !removed || err != nil {
				return v, removed, false, err
			}
			if !empty {
				l[i] = ni
				return v, true, false, nil
			}
		}
		out := append(append([]any{}, l[:i]...), l[i+1:]...)
		return out, true, len(out) == 0, nil
	}
	return v, false, false, nil
}

// sameItem tells whether a list item is the one a key or value element
// names.
func sameItem(item any, pe fieldpath.PathElement) bool {
	switch {
	case pe.Key != nil:
		m, ok := item.(map[string]any)
		return ok && MatchKey(m, *pe.Key)
	case pe.Value != nil:
		return value.Equals(interfaceValue(item), *pe.Value)
	}
	return false
}
