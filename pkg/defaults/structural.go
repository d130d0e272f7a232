package defaults

import (
	"fmt"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
)

// Structural answers from a custom resource's structural schema, as
// structured-merge-diff types converted from the CRD's OpenAPI v3 schema
// (which keep each property's default). The apiserver applies a
// property's default when the property is missing, then the defaults of
// the properties inside the value, so a removed field with a default comes
// back as the default completed by its own properties' defaults.
type Structural struct {
	Schema *smdschema.Schema
	// Type is the kind's type in Schema.
	Type smdschema.TypeRef
}

// Removal implements Source. The object itself is not needed: structural
// defaults are constants.
func (s Structural) Removal(p fieldpath.Path, _ []any) Answer {
	tr := s.Type
	var field *smdschema.StructField
	for _, pe := range p {
		atom, ok := s.Schema.Resolve(tr)
		if !ok {
			return Answer{Outcome: Removed}
		}
		field = nil
		switch {
		case pe.FieldName != nil && atom.Map != nil:
			if f, ok := atom.FindField(*pe.FieldName); ok {
				field, tr = &f, f.Type
			} else {
				tr = atom.Map.ElementType
			}
		case pe.FieldName == nil && atom.List != nil:
			tr = atom.List.ElementType
		default:
			return Answer{Outcome: Removed}
		}
	}
	if field == nil || field.Default == nil {
		return Answer{Outcome: Removed}
	}
	v := copyValue(field.Default)
	s.complete(v, field.Type, 0)
	return Answer{Outcome: Reset, Value: v}
}

// complete applies the defaults inside a value, as the apiserver's
// structural defaulting does: missing properties with a default get it,
// then every property, map value and list item is completed in turn.
func (s Structural) complete(v any, tr smdschema.TypeRef, depth int) {
	if depth > 64 {
		return // a recursive schema can't recurse in a finite default
	}
	atom, ok := s.Schema.Resolve(tr)
	if !ok {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		if atom.Map == nil {
			return
		}
		for _, f := range atom.Fields {
			if _, found := t[f.Name]; !found && f.Default != nil {
				t[f.Name] = copyValue(f.Default)
			}
		}
		for k, e := range t {
			if f, ok := atom.FindField(k); ok {
				s.complete(e, f.Type, depth+1)
			} else {
				s.complete(e, atom.Map.ElementType, depth+1)
			}
		}
	case []any:
		if atom.List == nil {
			return
		}
		for _, e := range t {
			s.complete(e, atom.List.ElementType, depth+1)
		}
	}
}

// copyValue deep-copies a default into the form of objects read from
// a server: string-keyed maps, int64 for whole numbers (schemas hold
// JSON's float64, or YAML's types when read from YAML).
func copyValue(v any) any {
	switch t := v.(type) {
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
	case int:
		return int64(t)
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[k] = copyValue(e)
		}
		return m
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = copyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, e := range t {
			l[i] = copyValue(e)
		}
		return l
	}
	return v
}

// Prune drops what the schema does not declare from a custom resource's
// content, as the apiserver's structural pruning does when it stores an
// object at this (storage) version: unknown properties go, unless a
// node preserves unknown fields or is a map of any keys. apiVersion, kind
// and metadata are left alone.
func (s Structural) Prune(obj map[string]any) {
	atom, ok := s.Schema.Resolve(s.Type)
	if !ok || atom.Map == nil {
		return
	}
	for k, v := range obj {
		switch k {
		case "apiVersion", "kind", "metadata":
			continue
		}
		if f, ok := atom.FindField(k); ok {
			s.prune(v, f.Type, 0)
			continue
		}
		if !openMap(atom.Map) {
			delete(obj, k)
		}
	}
}

func (s Structural) prune(v any, tr smdschema.TypeRef, depth int) {
	if depth > 64 {
		return
	}
	atom, ok := s.Schema.Resolve(tr)
	if !ok {
		return
	}
	switch t := v.(type) {
	case map[string]any:
		if atom.Map == nil {
			return
		}
		for k, x := range t {
			if f, ok := atom.FindField(k); ok {
				s.prune(x, f.Type, depth+1)
			} else if openMap(atom.Map) {
				s.prune(x, atom.Map.ElementType, depth+1)
			} else {
				delete(t, k)
			}
		}
	case []any:
		if atom.List == nil {
			return
		}
		for _, x := range t {
			s.prune(x, atom.List.ElementType, depth+1)
		}
	}
}

// openMap tells whether a map takes keys beyond its declared fields:
// additionalProperties, or x-kubernetes-preserve-unknown-fields (an
// element type of deduced values).
func openMap(m *smdschema.Map) bool {
	return m.ElementType.NamedType != nil || m.ElementType.Inlined != (smdschema.Atom{})
}
